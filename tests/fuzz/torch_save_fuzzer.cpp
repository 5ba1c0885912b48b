// Fuzz target: a torch.save inputs file (zip or legacy pickle, rewritten single-item opcodes,
// LibTorch's restricted unpickler) bound to a forward with tensor, optional and scalar arguments.
// Bad bytes must end in vin::diagnostics::Error.
#include <torch/script.h>

#include <cstddef>
#include <cstdint>

#include "fuzz_input.h"
#include "vin/diagnostics/records/error.h"
#include "vin/diagnostics/run/forward_inputs.h"

namespace {

const torch::jit::Module& model() {
  static const torch::jit::Module m = [] {
    torch::jit::Module module("__torch__.fuzz.Takes");
    module.define(
        "def forward(self, x: Tensor, y: Optional[Tensor] = None, scale: float = 1.0,\n"
        "            steps: int = 1, flag: bool = False):\n"
        "  return x\n");
    return module;
  }();
  return m;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string& path = vin::fuzz::write_scratch_file(data, size, ".pt");
  try {
    vin::diagnostics::read_forward_inputs(path, model(), c10::Device(c10::kCPU));
  } catch (const vin::diagnostics::Error&) {
  }
  return 0;
}
