// The peer of `vin-inspect capture` in the whole-process benchmark: loads the archive, reads the
// inputs the same way, runs the forward once without autograd, and exits.
//
// usage: vin-plain-forward ARCHIVE INPUTS
#include <torch/csrc/autograd/grad_mode.h>

#include <cstdio>

#include "vin/diagnostics/torch/forward_inputs.h"
#include "vin/diagnostics/torch/model_loader.h"

namespace vd = vin::diagnostics;

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: vin-plain-forward ARCHIVE INPUTS\n");
    return 2;
  }
  torch::jit::Module model = vd::load_torchscript_archive(argv[1]);
  const vd::ForwardInputs inputs = vd::read_forward_inputs(argv[2], model, c10::Device(c10::kCPU));
  at::NoGradGuard no_grad;
  torch::jit::Kwargs kwargs(inputs.kwargs.begin(), inputs.kwargs.end());
  model.get_method("forward")(inputs.args, kwargs);
  return 0;
}
