#include "vin/diagnostics/capture/capture_archive.h"

#include <chrono>
#include <optional>

#include "vin/diagnostics/run/forward_runner.h"
#include "vin/diagnostics/capture/model_capture.h"
#include "vin/diagnostics/capture/program_capture.h"
#include "vin/diagnostics/capture/tensor_consumers.h"
#include "vin/diagnostics/capture/tensor_sampling.h"
#include "vin/diagnostics/output/npz_writer.h"
#include "vin/diagnostics/plugin/log_sink.h"
#include "vin/diagnostics/torch/dtype_names.h"

namespace vin::diagnostics {
namespace {

// capture --save: the whole tensors as an .npz, complete or not at all (NpzWriter, OutputFile)
void save_tensors(const PlannedOutput& destination,
                  const std::vector<std::pair<std::string, at::Tensor>>& tensors) {
  NpzWriter writer(destination);
  for (const auto& [name, tensor] : tensors) {
    const char* descr = npy_descr(tensor.scalar_type());
    if (!descr) continue;  // a dtype numpy has no type for (LibTorch 2's unsigned 16/32/64)
    writer.add(name, NpyView{descr, tensor.sizes().vec(), tensor.data_ptr(),
                             static_cast<std::size_t>(tensor.nbytes())});
  }
  writer.finish();
}

}  // namespace

namespace {

// The capture common to both runners: the consumers the request asks for, each forward in
// turn under run_forwards' guards, what was captured so far handed on when a forward cannot
// be stopped. `Capture` is a ModelCapture (TorchScript) or a ProgramCapture (.pt2); `recorder`
// reaches its CallRecorder's state, `forward` runs one inputs file.
template <typename Capture, typename Recorder, typename Forward>
CaptureResult run_capture(const CaptureRequest& request, LoadedRun& loaded, Capture& capture,
                          Recorder& recorder, const Forward& forward, StageStopwatch& stopwatch) {
  if (request.stats) recorder.add_consumer(std::make_shared<NonfiniteCheck>());
  std::shared_ptr<TensorSaver> saver;
  if (request.save) {
    saver = std::make_shared<TensorSaver>(request.save_max_bytes);
    recorder.add_consumer(saver);
  }
  CaptureResult result;
  {
    recorder.enter();
    struct Closing {
      Recorder& recorder;
      ~Closing() { recorder.close(); }
    } closing{recorder};
    // what was captured so far goes with the message (the watchdog's thread, then the end)
    const OnAbandoned abandoned = [&](const std::string& message) {
      CaptureResult so_far;
      so_far.error = message;
      if (auto copy = recorder.copy_when_idle(std::chrono::seconds(1))) {
        so_far.snapshots = std::move(copy->first);
        so_far.summary = copy->second;
      }
      so_far.summary.seed = request.run.seed;
      if (request.on_abandoned) request.on_abandoned(so_far);
    };
    const auto step = [&](std::size_t i) {
      const std::string& name = loaded.input_names()[i];
      result.sources.files.push_back(name);
      try {
        forward(loaded.inputs()[i]);
      } catch (...) {
        result.sources.ends.push_back(static_cast<std::size_t>(recorder.snapshot_count()));
        throw;
      }
      result.sources.ends.push_back(static_cast<std::size_t>(recorder.snapshot_count()));
      stopwatch.lap("ran the forward on " + name);
    };
    if (auto failure = run_forwards(loaded, step, &capture, abandoned)) {
      result.error = std::move(failure->message);
      result.error_report = std::move(failure->report);
    }
  }
  result.snapshots = recorder.snapshots();
  result.summary = recorder.summary();
  result.summary.seed = request.run.seed;
  if (request.save) {
    save_tensors(*request.save, saver->saved());
    stopwatch.lap("saved the tensors");
  }
  return result;
}

// ModelCapture's recorder API as run_capture reaches it (enter gives a Scope there)
struct ModelCaptureRecorder {
  ModelCapture& capture;
  std::optional<ModelCapture::Scope> scope;
  void add_consumer(std::shared_ptr<TensorConsumer> c) { capture.add_consumer(std::move(c)); }
  void enter() { scope.emplace(capture.enter()); }
  void close() { scope.reset(); }
  auto copy_when_idle(std::chrono::milliseconds patience) const {
    return capture.copy_when_idle(patience);
  }
  std::int64_t snapshot_count() const { return capture.snapshot_count(); }
  const std::vector<TensorSnapshot>& snapshots() const { return capture.snapshots(); }
  CaptureSummary summary() const { return capture.summary(); }
};

}  // namespace

CaptureResult capture_archive(const CaptureRequest& request) {
  StageStopwatch stopwatch("capture");
  LoadedRun loaded(request.run, [&](const char* stage) { stopwatch.lap(stage); }, nullptr,
                   /*programs=*/true);
  if (export_run::ProgramRunner* program = loaded.program()) {
    ProgramCapture capture(*program, *loaded.program_forward(), request.module_paths,
                           request.limits);
    stopwatch.lap("planned the module calls");
    CaptureResult result = run_capture(
        request, loaded, capture, capture.recorder(),
        [&](const ForwardInputs& inputs) { capture.forward(inputs); }, stopwatch);
    result.summary.runner = "export_graph";
    return result;
  }
  // the model was loaded for this capture alone: no clone to keep it as it was
  ModelCapture capture =
      capture_model_in_place(loaded.model(), request.module_paths, request.limits);
  stopwatch.lap("instrumented the model");
  ModelCaptureRecorder recorder{capture, std::nullopt};
  return run_capture(
      request, loaded, capture, recorder,
      [&](const ForwardInputs& inputs) { capture.forward(inputs); }, stopwatch);
}

}  // namespace vin::diagnostics
