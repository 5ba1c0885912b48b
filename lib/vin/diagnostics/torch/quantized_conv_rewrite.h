// torch::jit::load's last step, without its cost on modules it cannot change.
//
// torch::jit::load ends with rewriteQuantizedConvForBC, which rewrites calls of the quantized
// convolutions of PyTorch 1.5 and before (quantized::conv2d with eight arguments, ...) to their
// current form. It runs a SubgraphRewriter on every module *instance*, recursively, and each run
// parses its four patterns again: an archive of 5,000 Linear modules paid 20,000 IR parses, about
// 40% of its load, on graphs (shared by the instances of a type) that call no quantized operator.
//
// quantized_conv_rewrite.cpp defines SubgraphRewriter::runOnModule, so LibTorch's call binds to
// it where LibTorch's library lets its symbols be interposed (the Debian and PyTorch builds do).
// While a QuantizedConvRewriteScope is alive on the calling thread, a module whose methods'
// graphs call no operator of the `quantized` namespace is returned as it is: every pattern of
// that rewrite is a quantized:: call, so none can match there. Every other call, and every call
// outside the scope, runs LibTorch's own function.
#pragma once

#include <cstdint>

namespace vin::diagnostics {

/// Marks torch::jit::load calls on this thread whose quantized-convolution rewrite may skip the
/// modules it cannot change (load_torchscript_archive holds one around its load).
class QuantizedConvRewriteScope {
 public:
  QuantizedConvRewriteScope();
  ~QuantizedConvRewriteScope();
  QuantizedConvRewriteScope(const QuantizedConvRewriteScope&) = delete;
  QuantizedConvRewriteScope& operator=(const QuantizedConvRewriteScope&) = delete;

 private:
  bool was_inside_;
};

/// What the rewrite did inside scopes on this thread, since the thread began.
struct QuantizedConvRewriteCounts {
  std::int64_t skipped = 0;  ///< modules returned as they were: no quantized:: call in them
  std::int64_t ran = 0;      ///< modules handed to LibTorch's own rewrite
};
QuantizedConvRewriteCounts quantized_conv_rewrite_counts();

}  // namespace vin::diagnostics
