#include "vin/diagnostics/capture/capture_archive.h"

#include <chrono>

#include "vin/diagnostics/run/forward_runner.h"
#include "vin/diagnostics/capture/model_capture.h"
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

CaptureResult capture_archive(const CaptureRequest& request) {
  StageStopwatch stopwatch("capture");
  LoadedRun loaded(request.run, [&](const char* stage) { stopwatch.lap(stage); });
  // the model was loaded for this capture alone: no clone to keep it as it was
  ModelCapture capture =
      capture_model_in_place(loaded.model(), request.module_paths, request.limits);
  stopwatch.lap("instrumented the model");
  if (request.stats) capture.add_consumer(std::make_shared<NonfiniteCheck>());
  std::shared_ptr<TensorSaver> saver;
  if (request.save) {
    saver = std::make_shared<TensorSaver>(request.save_max_bytes);
    capture.add_consumer(saver);
  }
  CaptureResult result;
  {
    auto scope = capture.enter();
    // what was captured so far goes with the message (the watchdog's thread, then the end)
    const OnAbandoned abandoned = [&](const std::string& message) {
      CaptureResult so_far;
      so_far.error = message;
      if (auto copy = capture.copy_when_idle(std::chrono::seconds(1))) {
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
        capture.forward(loaded.inputs()[i]);
      } catch (...) {
        result.sources.ends.push_back(static_cast<std::size_t>(capture.snapshot_count()));
        throw;
      }
      result.sources.ends.push_back(static_cast<std::size_t>(capture.snapshot_count()));
      stopwatch.lap("ran the forward on " + name);
    };
    if (auto failure = run_forwards(loaded, step, &capture, abandoned)) {
      result.error = std::move(failure->message);
      result.error_report = std::move(failure->report);
    }
  }
  result.snapshots = capture.snapshots();
  result.summary = capture.summary();
  result.summary.seed = request.run.seed;
  if (request.save) {
    save_tensors(*request.save, saver->saved());
    stopwatch.lap("saved the tensors");
  }
  return result;
}

}  // namespace vin::diagnostics
