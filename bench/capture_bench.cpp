// In-process benchmark of capture's instrumentation on one archive: the plain forward of the
// loaded module against the instrumented forward (default limits, recording on) of the same
// module, interleaved, medians of --runs after warm-up. Prints one JSON object, with the
// instrumented forward outside a scope (its observers called, nothing recorded) and the page
// faults of each kind of forward beside them: what recording costs is mostly where its records
// land among the forward's tensors (model_capture.cpp's StagedSnapshot).
//
// usage: vin-capture-bench ARCHIVE INPUTS [--runs N] [--device cpu|cuda[:N]]
// On a CUDA device each timed forward ends with a device synchronisation, so the times are the
// kernels' as well as the host's.
#include <ATen/Parallel.h>
#include <torch/csrc/autograd/grad_mode.h>

#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "vin/diagnostics/run/forward_runner.h"
#include "vin/diagnostics/capture/model_capture.h"

namespace vd = vin::diagnostics;
using Clock = std::chrono::steady_clock;

namespace {

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}

double millis(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double, std::milli>(b - a).count();
}

// minor page faults of this process so far
long page_faults() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_minflt;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr,
                 "usage: vin-capture-bench ARCHIVE INPUTS [--runs N] [--device cpu|cuda[:N]]\n");
    return 2;
  }
  int runs = 25;
  std::string device_name = "cpu";
  for (int i = 3; i + 1 < argc; ++i) {
    if (std::strcmp(argv[i], "--runs") == 0) runs = std::max(20, std::atoi(argv[i + 1]));
    if (std::strcmp(argv[i], "--device") == 0) device_name = argv[i + 1];
  }
  at::NoGradGuard no_grad;
  vd::ForwardRun run;
  run.archive = argv[1];
  run.inputs = {argv[2]};
  run.device = device_name;
  run.eval = true;
  vd::LoadedRun loaded(run);  // loaded and read as capture does
  const c10::Device device = loaded.device();
  torch::jit::Module& model = loaded.model();
  const vd::ForwardInputs& inputs = loaded.inputs().front();
  auto plain_forward = [&] {
    std::vector<c10::IValue> args = inputs.args;
    auto output = model.forward(args);
    vd::synchronize_device(device);
    return output;
  };
  for (int i = 0; i < 5; ++i) plain_forward();  // warm-up: profiling runs and optimisation

  std::vector<double> plain, instrumented, not_recording;
  long plain_faults = 0, recording_faults = 0;
  std::size_t snapshots = 0;
  for (int run = 0; run < runs; ++run) {
    // a fresh capture each run, so that every timed run records up to the default quotas; its
    // graphs are warmed with forwards outside a scope (nothing recorded) first, like the plain
    // module's
    auto capture = vd::capture_model(model);
    for (int i = 0; i < 3; ++i) capture.forward(inputs);

    const long faults0 = page_faults();
    const auto t0 = Clock::now();
    plain_forward();
    const auto t1 = Clock::now();
    const long faults1 = page_faults();
    capture.forward(inputs);  // no scope open: the observers return at once
    vd::synchronize_device(device);
    const auto t2 = Clock::now();
    {
      auto scope = capture.enter();  // once before a capture's forwards, as capture does
      const long faults2 = page_faults();
      const auto t3 = Clock::now();
      capture.forward(inputs);
      vd::synchronize_device(device);
      const auto t4 = Clock::now();
      recording_faults += page_faults() - faults2;
      instrumented.push_back(millis(t3, t4));
    }
    plain_faults += faults1 - faults0;
    plain.push_back(millis(t0, t1));
    not_recording.push_back(millis(t1, t2));
    snapshots = capture.snapshots().size();
  }
  const double p = median(plain), q = median(instrumented);
  std::printf(
      "{\"archive\": \"%s\", \"device\": \"%s\", \"runs\": %d, \"threads\": %d, "
      "\"plain_ms\": %.3f, \"instrumented_ms\": %.3f, \"ratio\": %.4f, "
      "\"not_recording_ms\": %.3f, \"snapshots_per_run\": %zu, "
      "\"faults_per_plain_forward\": %ld, \"faults_per_recording_forward\": %ld}\n",
      argv[1], device.str().c_str(), runs, at::get_num_threads(), p, q, q / p,
      median(not_recording), snapshots, plain_faults / runs, recording_faults / runs);
  return 0;
}
