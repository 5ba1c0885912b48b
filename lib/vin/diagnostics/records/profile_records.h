// Records of `vin-inspect profile` (contract 8): per module (ModuleProfile), per operator the
// archive's code calls (OperatorProfile), and the summary (ProfileSummary). Plain values;
// nothing here depends on LibTorch.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace vin::diagnostics {

/// What one module's calls cost in the instrumented forward.
struct ModuleProfile {
  std::string module_path;  ///< "<root>" for the root
  std::string module_type;  ///< Python-qualified (TorchScript mangling removed)
  std::int64_t calls = 0;
  std::int64_t parameters = 0;  ///< elements registered in it and below it, each tensor once
  /// the shapes of the tensors of its first call's inputs and output, in capture's walk order
  std::vector<std::vector<std::int64_t>> input_shapes;
  std::vector<std::vector<std::int64_t>> output_shapes;
  std::int64_t flops = 0;       ///< all its calls, its submodules' included
  std::int64_t self_flops = 0;  ///< outside its submodules' calls
  double time_ms = 0;
  double self_time_ms = 0;
  std::int64_t allocated_bytes = 0;  ///< allocated on its device during its calls
  std::int64_t peak_bytes = 0;  ///< most live bytes during one call, counted from its start
};

/// One operator the archive's code calls (the outermost of a dispatch stack).
struct OperatorProfile {
  std::string name;  ///< as the graph names it: "aten::conv2d"
  std::int64_t calls = 0;
  std::int64_t flops = 0;  ///< counted inside it (aten::linear's are its aten::addmm's)
  double time_ms = 0;      ///< inclusive of what it dispatches to
};

}  // namespace vin::diagnostics
