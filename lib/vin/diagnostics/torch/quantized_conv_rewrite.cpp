#include "vin/diagnostics/torch/quantized_conv_rewrite.h"

#include <dlfcn.h>
#include <torch/csrc/jit/api/function_impl.h>
#include <torch/csrc/jit/api/module.h>
#include <torch/csrc/jit/passes/subgraph_rewrite.h>

#include <vector>

namespace vin::diagnostics {
namespace {

thread_local bool inside_scope = false;
thread_local QuantizedConvRewriteCounts counts;

// Whether `block` or a block nested in it calls an operator of the quantized namespace.
bool calls_quantized(const torch::jit::Block& block, c10::Symbol quantized) {
  for (const torch::jit::Node* node : block.nodes()) {
    if (node->kind().ns() == quantized) return true;
    for (const torch::jit::Block* inner : node->blocks())
      if (calls_quantized(*inner, quantized)) return true;
  }
  return false;
}

// Whether LibTorch's runOnModule could change `module`: the graphs it would rewrite (those of the
// module's methods) call a quantized:: operator, or one of them is not a graph this can read.
bool may_rewrite(const torch::jit::Module& module) {
  static const c10::Symbol quantized = c10::Symbol::fromQualString("namespaces::quantized");
  for (const torch::jit::Method& method : module.get_methods()) {
    torch::jit::Function& function = method.function();
    if (!function.isGraphFunction()) return true;
    if (calls_quantized(*torch::jit::toGraphFunction(function).graph()->block(), quantized))
      return true;
  }
  return false;
}

// LibTorch's own SubgraphRewriter::runOnModule: the next definition after this one. Called as a
// function of (this, module): the C++ ABIs LibTorch runs on (Itanium on x86-64 and AArch64) pass
// a member function's `this` and a returned class's address as this signature does.
using RunOnModule = torch::jit::Module (*)(torch::jit::SubgraphRewriter*,
                                           const torch::jit::Module&);
RunOnModule libtorch_run_on_module() {
  static const auto original = reinterpret_cast<RunOnModule>(
      dlsym(RTLD_NEXT, "_ZN5torch3jit16SubgraphRewriter11runOnModuleERKNS0_6ModuleE"));
  return original;
}

}  // namespace

QuantizedConvRewriteScope::QuantizedConvRewriteScope() : was_inside_(inside_scope) {
  inside_scope = true;
}

QuantizedConvRewriteScope::~QuantizedConvRewriteScope() { inside_scope = was_inside_; }

QuantizedConvRewriteCounts quantized_conv_rewrite_counts() { return counts; }

}  // namespace vin::diagnostics

namespace torch::jit {

// Interposes LibTorch's definition (quantized_conv_rewrite.h says why and when).
Module SubgraphRewriter::runOnModule(const Module& module) {
  using namespace vin::diagnostics;
  const RunOnModule original = libtorch_run_on_module();
  if (inside_scope && !may_rewrite(module)) {
    ++counts.skipped;
    return module;
  }
  if (inside_scope) ++counts.ran;
  if (original) return original(this, module);
  // LibTorch's definition is not visible from here: its body, runOnGraph on each method's graph
  // (the rewriter's list of nodes to delete, which it also clears first, is empty after each run)
  for (const Method& method : module.get_methods()) {
    auto graph = toGraphFunction(method.function()).graph();
    runOnGraph(graph);
  }
  return module;
}

}  // namespace torch::jit
