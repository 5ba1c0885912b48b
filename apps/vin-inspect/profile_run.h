// A profiled forward as `profile` and `report` run one (contract 8, 13.1): the run options they
// share, declared once (the inputs, --device, --warmup, --runs, --threads, --nested-operators),
// and the run through the plugin with its progress line, its warnings and its errors.
#pragma once

#include <CLI/CLI.hpp>

#include "options.h"
#include "vin/diagnostics/output/output_plan.h"
#include "vin/diagnostics/plugin/torch_plugin.h"

namespace vin::cli {

struct ProfileRun {
  diagnostics::ProfileRequest request;
  RunOptions run;

  /// The inputs and --device (profile's --module comes after them in its help).
  void add_inputs(CLI::App& sub);
  /// --warmup, --runs, --threads, --nested-operators.
  void add_timing(CLI::App& sub);

  /// Applies the run options to the request: their usage errors, before anything is planned.
  void prepare() { run.apply_to(request.run); }
  /// Profiles `archive` (after prepare()), `plan` discarded if a forward past --timeout
  /// ends the process. Prints the run's warnings; throws its error.
  diagnostics::ProfileResult profile(const std::string& archive, diagnostics::OutputPlan& plan);
};

}  // namespace vin::cli
