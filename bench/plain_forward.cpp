// The peer of vin-inspect in the benchmarks: loads the archive and reads the inputs as capture
// and profile do, then runs the forward without autograd, plainly (no observers, no callbacks,
// the graph executor as LibTorch configures it). A .pt2 runs on the tool's interpreter of the
// exported graph, plainly too (bench/bench_pt2.py: its cost against the TorchScript twin's).
//
// usage: vin-plain-forward ARCHIVE INPUTS                 one forward, then exit (capture's peer)
//        vin-plain-forward ARCHIVE INPUTS WARMUP RUNS     profile's peer: WARMUP forwards, then
//            RUNS timed ones (the device synchronised around each on CUDA, as profile does);
//            prints each time in milliseconds, one a line
#include <torch/csrc/autograd/grad_mode.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>

#include "vin/diagnostics/run/forward_runner.h"

namespace vd = vin::diagnostics;

int main(int argc, char** argv) {
  if (argc != 3 && argc != 5) {
    std::fprintf(stderr, "usage: vin-plain-forward ARCHIVE INPUTS [WARMUP RUNS]\n");
    return 2;
  }
  vd::ForwardRun run;
  run.archive = argv[1];
  run.inputs = {argv[2]};
  if (const char* device = std::getenv("VIN_BENCH_DEVICE")) run.device = device;
  // loaded and read as capture does (a .pt2 for the interpreter too)
  vd::LoadedRun loaded(run, {}, nullptr, /*programs=*/true);
  const vd::ForwardInputs& inputs = loaded.inputs().front();
  at::NoGradGuard no_grad;
  torch::jit::Kwargs kwargs(inputs.kwargs.begin(), inputs.kwargs.end());
  const c10::Device device = loaded.device();
  const auto forward = [&] {
    if (vd::export_run::ProgramRunner* program = loaded.program())
      program->run(loaded.program_forward()->arguments(inputs));
    else
      loaded.model().get_method(inputs.method)(inputs.args, kwargs);
  };
  if (argc == 3) {
    forward();
    return 0;
  }
  const long warmup = std::atol(argv[3]), runs = std::atol(argv[4]);
  for (long i = 0; i < warmup; ++i) {
    forward();
    vd::synchronize_device(device);
  }
  for (long i = 0; i < runs; ++i) {
    vd::synchronize_device(device);
    const auto start = std::chrono::steady_clock::now();
    forward();
    vd::synchronize_device(device);
    std::printf("%.6f\n", std::chrono::duration<double, std::milli>(
                              std::chrono::steady_clock::now() - start)
                              .count());
  }
  return 0;
}
