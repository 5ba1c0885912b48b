#include "vin/diagnostics/profiling/profile_recorder.h"

#include <unordered_set>

#include "vin/diagnostics/records/model_metadata.h"
#include "vin/diagnostics/torch/inspect_model.h"

namespace vin::diagnostics::profiling {

std::unordered_map<std::string, ModuleFacts> module_facts(const torch::jit::Module& model,
                                                          std::vector<std::string>& paths) {
  std::unordered_map<std::string, ModuleFacts> facts;
  for (const auto& item : model.named_modules()) {
    const std::string path = item.name.empty() ? kRootPath : item.name;
    if (facts.count(path)) continue;
    paths.push_back(path);
    ModuleFacts& f = facts[path];
    f.type = module_type_name(item.value);
    std::unordered_set<const c10::TensorImpl*> seen;
    for (const at::Tensor& p : item.value.parameters(/*recurse=*/true))
      if (p.defined() && seen.insert(p.unsafeGetTensorImpl()).second) f.parameters += p.numel();
  }
  return facts;
}

std::unordered_map<std::string, ModuleFacts> program_facts(const export_run::ProgramRunner& runner,
                                                           std::vector<std::string>& paths) {
  const ExportProgram& program = runner.program();
  std::unordered_map<std::string, ModuleFacts> facts;
  for (const std::string& path : program.module_paths) {
    const std::string recorded = path.empty() ? kRootPath : path;
    if (facts.count(recorded)) continue;
    paths.push_back(recorded);
    ModuleFacts& f = facts[recorded];
    if (const auto type = program.module_types.find(path); type != program.module_types.end())
      f.type = type->second;
  }
  std::unordered_map<std::string, export_run::TiedWeights> met;  // per module
  for (const ProgramWeight& w : program.weights) {
    const at::Tensor* tensor = w.kind == "parameter" ? runner.weight(w.name) : nullptr;
    if (!tensor) continue;
    // the root and every module whose path is a prefix of the name
    std::vector<std::string> owners{kRootPath};
    for (std::size_t dot = w.name.find('.'); dot != std::string::npos;
         dot = w.name.find('.', dot + 1))
      owners.push_back(w.name.substr(0, dot));
    for (const std::string& owner : owners)
      if (const auto it = facts.find(owner);
          it != facts.end() && met[owner].first(*tensor))
        it->second.parameters += tensor->numel();
  }
  return facts;
}
}  // namespace vin::diagnostics::profiling
