// The module calls of an exported program as torch.export.unflatten shows them to forward hooks
// (contract 12.2): dead nodes dropped; a call is a maximal run of consecutive live nodes whose
// nn_module_stack holds the module's entry (a node without a stack belongs to the call it sits
// in); its inputs and outputs by the module's preserved signature where module_call_graph has
// one, else unflatten's rule (the values defined outside and used inside, each once, in reverse
// order of first use, the module's own parameters, buffers and constants left out; the values
// defined inside and used after, in definition order). The root's call is the run itself.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "vin/diagnostics/export/export_program.h"
#include "vin/diagnostics/export_run/program_plan.h"
#include "vin/diagnostics/export_run/pytree.h"

namespace vin::diagnostics::export_run {

struct ModuleCall {
  std::size_t module = 0;  ///< into ExportProgram::module_paths
  std::size_t first = 0;   ///< its first live node
  std::size_t last = 0;    ///< its last live node
  /// (args, kwargs) as a tree over `inputs`; the output as a tree over `outputs`
  TreeSpec input_spec;
  std::vector<ValueSource> inputs;
  TreeSpec output_spec;
  std::vector<ValueSource> outputs;
};

struct ModuleCallPlan {
  std::vector<ModuleCall> calls;  ///< in the order they begin
  /// by node of the program's graph: the calls that begin right before it (outermost first),
  /// and those that end right after it (innermost first)
  std::vector<std::vector<std::size_t>> begin_before;
  std::vector<std::vector<std::size_t>> end_after;
};

/// The calls of the program's graph (`graph`: plan_program's graphs[0]). Throws Error naming the
/// module for a preserved signature that does not fit its values.
ModuleCallPlan plan_module_calls(const ExportProgram& program, const GraphPlan& graph);

}  // namespace vin::diagnostics::export_run
