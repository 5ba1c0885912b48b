// The peer of `vin-inspect capture` in the whole-process benchmark: loads the archive, reads the
// inputs the same way, runs the forward once without autograd, and exits.
//
// usage: vin-plain-forward ARCHIVE INPUTS
#include <torch/csrc/autograd/grad_mode.h>

#include <cstdio>

#include "vin/diagnostics/capture/forward_runner.h"

namespace vd = vin::diagnostics;

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: vin-plain-forward ARCHIVE INPUTS\n");
    return 2;
  }
  vd::ForwardRun run;
  run.archive = argv[1];
  run.inputs = {argv[2]};
  vd::LoadedRun loaded(run);  // loaded and read as capture does
  const vd::ForwardInputs& inputs = loaded.inputs().front();
  at::NoGradGuard no_grad;
  torch::jit::Kwargs kwargs(inputs.kwargs.begin(), inputs.kwargs.end());
  loaded.model().get_method(inputs.method)(inputs.args, kwargs);
  return 0;
}
