// A command's outputs, through the one planner (lib's OutputPlan; contract 9.1): the records (-o,
// or standard output) and the command's other files (--save, --trace), planned against its
// inputs and the libraries it loads before anything runs, staged, and put in place together when
// the command succeeds.
#pragma once

#include <sstream>
#include <string>
#include <vector>

#include "options.h"
#include "vin/diagnostics/output/output_plan.h"
#include "vin/diagnostics/output/output_sink.h"
#include "vin/diagnostics/records/error.h"

namespace vin::cli {

/// What the records output is called in the plan and in its refusals.
inline constexpr const char* kRecordsOutput = "--output";

/// The plan of a command that reads `inputs` and writes its records (where `output` says) and
/// `others` ({"--save", path}, ...; one without a path was not asked for and is left out). The
/// libraries it loads count as inputs.
diagnostics::OutputPlan plan_outputs(const OutputOptions& output,
                                     std::vector<diagnostics::NamedPath> inputs,
                                     std::vector<diagnostics::OutputPlan::Output> others = {});

/// Formats the records with `write` (running out of memory names `file`) and writes them where
/// the plan puts the records.
template <class Write>
void write_records(const diagnostics::OutputPlan& plan, const std::string& file, Write&& write) {
  const std::string text = diagnostics::naming_out_of_memory(file, "formatting the records", [&] {
    std::ostringstream out;
    write(out);
    return out.str();
  });
  diagnostics::write_output(plan.destination(kRecordsOutput), text);
}

}  // namespace vin::cli
