#include "outputs.h"

#include "torch_access.h"

namespace vd = vin::diagnostics;

namespace vin::cli {

vd::OutputPlan plan_outputs(const OutputOptions& output, std::vector<vd::NamedPath> inputs,
                            std::vector<vd::OutputPlan::Output> others) {
  const std::vector<vd::NamedPath> libraries = loaded_libraries();
  inputs.insert(inputs.end(), libraries.begin(), libraries.end());
  std::vector<vd::OutputPlan::Output> outputs{{kRecordsOutput, output.output}};
  for (auto& other : others)  // an output not asked for (no --trace) is not planned
    if (other.path) outputs.push_back(std::move(other));
  return vd::OutputPlan(inputs, outputs);
}

}  // namespace vin::cli
