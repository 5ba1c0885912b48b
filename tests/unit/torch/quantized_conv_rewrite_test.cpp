#include <torch/script.h>

#include <string>
#include <vector>

#include "fixtures.h"
#include "vin/diagnostics/torch/model_loader.h"
#include "vin/diagnostics/torch/quantized_conv_rewrite.h"

#include "doctest_after_torch.h"  // last: after glog's CHECK macros

using namespace vin::diagnostics;

namespace {

// Every method graph of every module of `model`, printed, in named_modules order.
std::vector<std::string> graphs_of(const torch::jit::Module& model) {
  std::vector<std::string> graphs;
  for (const auto& item : model.named_modules())
    for (const auto& method : item.value.get_methods())
      graphs.push_back(item.name + "." + method.name() + ":\n" +
                       torch::jit::toGraphFunction(method.function()).graph()->toString());
  return graphs;
}

QuantizedConvRewriteCounts counted_load(const std::string& file) {
  const QuantizedConvRewriteCounts before = quantized_conv_rewrite_counts();
  load_torchscript_archive(file);
  const QuantizedConvRewriteCounts after = quantized_conv_rewrite_counts();
  return {after.skipped - before.skipped, after.ran - before.ran};
}

}  // namespace

TEST_CASE(
    "the load skips LibTorch's quantized-convolution rewrite where no quantized operator is "
    "called, and runs it where one is") {
  // wide.pt: 5,054 modules, none quantized; this executable's definition of runOnModule is the
  // one LibTorch's load calls, as the plugin's is in vin-inspect
  const QuantizedConvRewriteCounts wide = counted_load(fixture("wide.pt"));
  INFO(
      "no module counted: this LibTorch's load does not call the project's runOnModule (a "
      "library linked with -Bsymbolic or LTO binds its own); the load is then only slower");
  CHECK(wide.skipped >= 5054);
  CHECK(wide.ran == 0);
  // static_quantized.pt: quantized Conv2d and ConvReLU2d
  const QuantizedConvRewriteCounts quantized = counted_load(fixture("static_quantized.pt"));
  CHECK(quantized.ran > 0);
  CHECK(quantized.skipped > 0);  // its QuantStub, DeQuantStub and ReLU call no quantized::
}

TEST_CASE("a load that skips the rewrite makes the same graphs as LibTorch's own load") {
  for (const char* name : {"static_quantized.pt", "everything.pt", "wide.pt", "convnet.pt"}) {
    CAPTURE(name);
    const QuantizedConvRewriteCounts before = quantized_conv_rewrite_counts();
    // outside a QuantizedConvRewriteScope: LibTorch's runOnModule on every module
    const torch::jit::Module libtorch = torch::jit::load(fixture(name));
    const QuantizedConvRewriteCounts after = quantized_conv_rewrite_counts();
    CHECK(after.skipped == before.skipped);
    CHECK(after.ran == before.ran);
    CHECK(graphs_of(load_torchscript_archive(fixture(name))) == graphs_of(libtorch));
  }
}
