// forward as an exported program takes it (contract 12.1): its schema for binding inputs files
// and --shape (forward_inputs.h's rules: arr_N positional, other names keyword), the bound
// arguments flattened into the program's inputs by the root's in_spec, and its outputs given
// back the structure of the root's out_spec (a dict output keeps its keys).
#pragma once

#include <vector>

#include "vin/diagnostics/export_run/program_runner.h"
#include "vin/diagnostics/export_run/pytree.h"
#include "vin/diagnostics/run/forward_inputs.h"

namespace vin::diagnostics {

/// How one program's forward is called: its schema, and the root's in_spec and out_spec.
class ProgramForward {
 public:
  /// Throws Error naming the file for a root signature this runner cannot rebuild.
  explicit ProgramForward(const export_run::ProgramRunner& runner);

  /// forward(x: Tensor, ...): a user input's type (Tensor, int, float, bool), a constant the
  /// export specialised with its value as the default.
  const ForwardSchema& schema() const { return schema_; }
  /// One value per program argument (ProgramRunner::arguments), flattened from `inputs`.
  std::vector<c10::IValue> arguments(const ForwardInputs& inputs) const;
  /// The user outputs in the root's output structure.
  c10::IValue output(const std::vector<c10::IValue>& outputs) const;

 private:
  const export_run::ProgramRunner& runner_;
  ForwardSchema schema_;
  std::optional<export_run::TreeSpec> in_spec_, out_spec_;
};

}  // namespace vin::diagnostics
