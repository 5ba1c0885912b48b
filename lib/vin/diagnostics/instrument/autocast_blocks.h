// TorchScript's `with torch.autocast(...)` blocks, run as Python runs them. TorchScript applies
// autocast to a block in one pass of its optimised pipeline (torch::jit::Autocast, after
// inlining), so a graph run unoptimised, as capture runs its instrumented graphs (the observers
// must see every module call), computes the block in full precision where Python, optimised by
// default, lowers it. This pass marks each block's entry and exit in the graphs with operators
// that set the thread's autocast state as torch.autocast's __enter__ and __exit__ do
// (AutocastScope) when the run is unoptimised, and do nothing when it is optimised (TorchScript's
// own pass has then done the work).
#pragma once

#include <torch/csrc/jit/api/module.h>

#include <cstddef>

namespace vin::diagnostics {

/// Marks the autocast blocks of every method of every module type of `module` (each graph
/// once). Returns how many blocks it marked.
std::size_t mark_autocast_blocks(torch::jit::Module& module);

/// Leaves the thread's autocast state as it was when made, whatever blocks a forward that threw
/// left open: one around each run of a marked module.
class AutocastBlocksGuard {
 public:
  AutocastBlocksGuard();
  ~AutocastBlocksGuard();
  AutocastBlocksGuard(const AutocastBlocksGuard&) = delete;
  AutocastBlocksGuard& operator=(const AutocastBlocksGuard&) = delete;

 private:
  std::size_t depth_;
};

}  // namespace vin::diagnostics
