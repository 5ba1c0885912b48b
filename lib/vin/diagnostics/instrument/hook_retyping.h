// The graph pass that types a clone's scripted forward hooks for the clone: Module::clone
// leaves the root's hooks behind, and the submodules' hooks that TorchScript emitted into the
// callers' graphs (as constants: `prim::CallFunction(hook, submodule, ...)`) stay the caller's
// functions in the clone's graphs. Either, typed for the caller's classes, would call the
// caller's uninstrumented methods for the modules it calls; each gets a copy whose graph names
// the clone's classes (ModelCapture on a clone uses it).
#pragma once

#include <torch/csrc/jit/api/module.h>

#include <unordered_map>

namespace vin::diagnostics {

class HookRetyping {
 public:
  HookRetyping(const torch::jit::Module& model, const torch::jit::Module& clone);

  /// The copy of `hook` typed for the clone (made once per hook).
  torch::jit::Function* copy_of(torch::jit::Function& hook);

  /// Points the hook calls in every method of the clone's classes at the copies.
  void retype_calls_in_methods();

 private:
  // a hook is a function whose first argument is a module of the caller's tree; free functions
  // are left alone
  bool is_hook(torch::jit::Function& fn) const;
  void retype_calls_in(torch::jit::Block& block);

  // each class type of the module's tree and the class type its clone has in its place
  std::unordered_map<c10::TypePtr, c10::TypePtr> remap_;
  const torch::jit::Module& clone_;
  std::unordered_map<torch::jit::Function*, torch::jit::Function*> copies_;
};

}  // namespace vin::diagnostics
