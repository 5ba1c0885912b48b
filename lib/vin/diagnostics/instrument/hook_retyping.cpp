#include "vin/diagnostics/instrument/hook_retyping.h"

#include <torch/csrc/jit/api/function_impl.h>

#include <unordered_set>

namespace vin::diagnostics {
namespace {

using TypeRemap = std::unordered_map<c10::TypePtr, c10::TypePtr>;

TypeRemap clone_types(const torch::jit::Module& model, const torch::jit::Module& clone) {
  TypeRemap remap;
  const auto originals = model.named_modules();
  const auto clones = clone.named_modules();
  // a clone keeps its module's slots in order
  for (auto o = originals.begin(), c = clones.begin(); o != originals.end() && c != clones.end();
       ++o, ++c)
    remap.emplace((*o).value.type(), (*c).value.type());
  return remap;
}

}  // namespace

HookRetyping::HookRetyping(const torch::jit::Module& model, const torch::jit::Module& clone)
    : remap_(clone_types(model, clone)), clone_(clone) {}

torch::jit::Function* HookRetyping::copy_of(torch::jit::Function& hook) {
  if (const auto it = copies_.find(&hook); it != copies_.end()) return it->second;
  auto graph = torch::jit::toGraphFunction(hook).graph()->copy();
  graph->remapTypes([this](c10::TypePtr type) {
    const auto it = remap_.find(type);
    return it == remap_.end() ? type : it->second;
  });
  const auto& clone_type = clone_.type();
  torch::jit::Function* copy = clone_type->compilation_unit()->create_function(
      c10::QualifiedName(*clone_type->name(), hook.name()), graph, /*shouldMangle=*/true);
  copies_.emplace(&hook, copy);
  retype_calls_in(*graph->block());  // hooks of the modules the hook calls
  return copy;
}

void HookRetyping::retype_calls_in_methods() {
  std::unordered_set<const c10::ClassType*> seen;
  for (const auto& [original, cloned] : remap_) {
    const auto cls = cloned->cast<c10::ClassType>();
    if (!cls || !seen.insert(cls.get()).second) continue;
    for (torch::jit::Function* method : cls->methods())
      if (auto* graph_fn = dynamic_cast<torch::jit::GraphFunction*>(method))
        retype_calls_in(*graph_fn->graph()->block());
  }
}

bool HookRetyping::is_hook(torch::jit::Function& fn) const {
  const auto* graph_fn = dynamic_cast<torch::jit::GraphFunction*>(&fn);
  if (!graph_fn) return false;
  const auto inputs = graph_fn->graph()->inputs();
  return !inputs.empty() && remap_.count(inputs[0]->type()) != 0;
}

void HookRetyping::retype_calls_in(torch::jit::Block& block) {
  for (torch::jit::Node* node : block.nodes()) {
    for (torch::jit::Block* inner : node->blocks()) retype_calls_in(*inner);
    if (node->hasAttribute(c10::attr::Subgraph))  // a prim::fork's closure
      retype_calls_in(*node->g(c10::attr::Subgraph)->block());
    if (node->kind() != c10::prim::Constant || node->outputs().size() != 1) continue;
    const auto fn_type = node->output()->type()->cast<c10::FunctionType>();
    if (fn_type && is_hook(*fn_type->function()))
      node->output()->setType(c10::FunctionType::create(copy_of(*fn_type->function())));
  }
}

}  // namespace vin::diagnostics
