#include "vin/diagnostics/capture/capture_archive.h"

#include <torch/csrc/jit/runtime/graph_executor.h>

#include <torch/csrc/autograd/grad_mode.h>

#include <ATen/Context.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <iomanip>
#include <mutex>
#include <sstream>
#include <string_view>
#include <thread>

#include "vin/diagnostics/capture/model_capture.h"
#include "vin/diagnostics/capture/tensor_sampling.h"
#include "vin/diagnostics/output/npz_writer.h"
#include "vin/diagnostics/records/error.h"
#include "vin/diagnostics/records/log_sink.h"
#include "vin/diagnostics/torch/forward_inputs.h"
#include "vin/diagnostics/torch/model_loader.h"

namespace vin::diagnostics {
namespace {

using Clock = std::chrono::steady_clock;

// The interpreter re-raises what an operation throws as its own error, with the text of the
// original: std::bad_alloc arrives as "std::bad_alloc".
bool out_of_memory(const std::exception& e) {
  return dynamic_cast<const std::bad_alloc*>(&e) != nullptr ||
         std::string_view(e.what()).find("std::bad_alloc") != std::string_view::npos;
}

std::string seconds_text(double seconds) {
  std::ostringstream text;
  text << seconds;
  return text.str();
}

// Stops nothing itself: a forward past its deadline is stopped by the capture's observer at its
// next module call. One that reaches none (a long single operation, a loop without module calls)
// cannot be interrupted inside LibTorch, so a second after the deadline the watchdog hands what
// was captured to the request's on_abandoned and ends the process.
class Watchdog {
 public:
  Watchdog(const ModelCapture& capture, const CaptureRequest& request)
      : capture_(capture), request_(request), thread_([this] { watch(); }) {}
  ~Watchdog() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      done_ = true;
    }
    wake_.notify_all();
    thread_.join();
  }
  Watchdog(const Watchdog&) = delete;
  Watchdog& operator=(const Watchdog&) = delete;

  void arm(Clock::time_point deadline, std::string inputs) {
    std::lock_guard<std::mutex> lock(mutex_);
    deadline_ = deadline;
    inputs_ = std::move(inputs);
    wake_.notify_all();
  }
  void disarm() {
    std::lock_guard<std::mutex> lock(mutex_);
    deadline_.reset();
  }

 private:
  void watch() {
    std::unique_lock<std::mutex> lock(mutex_);
    while (!done_) {
      if (!deadline_) {
        wake_.wait(lock);
        continue;
      }
      const Clock::time_point give_up = *deadline_ + std::chrono::seconds(1);
      if (Clock::now() < give_up) {
        wake_.wait_until(lock, give_up);
        continue;
      }
      abandon();
    }
  }

  [[noreturn]] void abandon() {
    CaptureResult result;
    result.error = request_.archive + ": the forward on " + inputs_ + " did not finish within " +
                   seconds_text(*request_.timeout_seconds) +
                   " s (--timeout) and could not be stopped at a module call";
    if (auto copy = capture_.copy_when_idle(std::chrono::seconds(1))) {
      result.snapshots = std::move(copy->first);
      result.summary = copy->second;
    }
    if (request_.on_abandoned) request_.on_abandoned(result);
    std::_Exit(1);
  }

  const ModelCapture& capture_;
  const CaptureRequest& request_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::optional<Clock::time_point> deadline_;
  std::string inputs_;
  bool done_ = false;
  std::thread thread_;  // last: starts once everything above exists
};

// Selects the quantized backend before the archive is loaded (its packed parameters are packed
// for the backend in force when __setstate__ runs), as torch.backends.quantized.engine does.
void select_quantized_engine(const std::string& name) {
  static const std::pair<const char*, at::QEngine> engines[] = {{"fbgemm", at::QEngine::FBGEMM},
                                                                {"qnnpack", at::QEngine::QNNPACK},
                                                                {"onednn", at::QEngine::ONEDNN},
                                                                {"x86", at::QEngine::X86}};
  std::string supported;
  for (const auto& [engine_name, engine] : engines) {
    const auto& available = at::globalContext().supportedQEngines();
    if (std::find(available.begin(), available.end(), engine) == available.end()) continue;
    if (name == engine_name) {
      at::globalContext().setQEngine(engine);
      return;
    }
    supported += (supported.empty() ? "" : ", ") + std::string(engine_name);
  }
  throw UsageError("--quantized-engine " + name + " is not available in this LibTorch build " +
                   "(available: " + supported + ")");
}

// capture --save: the whole tensors as an .npz, complete or not at all (NpzWriter, OutputFile)
void save_tensors(const std::string& path,
                  const std::vector<std::pair<std::string, at::Tensor>>& tensors) {
  NpzWriter writer(path);
  for (const auto& [name, tensor] : tensors) {
    const char* descr = npy_descr(tensor.scalar_type());
    if (!descr) continue;  // a dtype numpy has no type for (LibTorch 2's unsigned 16/32/64)
    writer.add(name, NpyView{descr, tensor.sizes().vec(), tensor.data_ptr(),
                             static_cast<std::size_t>(tensor.nbytes())});
  }
  writer.finish();
}

// Where a capture's time goes, for `--log-level debug`: one line per stage.
class Stopwatch {
 public:
  void lap(const std::string& stage) {
    const auto now = Clock::now();
    std::ostringstream line;
    line << "capture: " << stage << " in " << std::fixed << std::setprecision(1)
         << std::chrono::duration<double, std::milli>(now - last_).count() << " ms";
    log_line(LogLevel::debug, line.str());
    last_ = now;
  }

 private:
  Clock::time_point last_ = Clock::now();
};

}  // namespace

CaptureResult capture_archive(const CaptureRequest& request) {
  Stopwatch stopwatch;
  const c10::Device device = resolve_device(request.device);
  if (request.quantized_engine) select_quantized_engine(*request.quantized_engine);
  torch::jit::Module model = naming_out_of_memory(request.archive, "loading the archive", [&] {
    return load_torchscript_archive(request.archive, request.device);
  });
  stopwatch.lap("loaded the archive");
  if (request.eval) model.eval();
  // read every inputs file before running anything: a bad file fails fast
  std::vector<ForwardInputs> inputs;
  std::vector<std::string> input_names = request.inputs;  // for messages and the table
  for (const auto& path : request.inputs)
    inputs.push_back(naming_out_of_memory(
        path, "reading the inputs", [&] { return read_forward_inputs(path, model, device); }));
  if (request.shaped) {
    inputs.push_back(make_shaped_inputs(*request.shaped, model, device));
    input_names.push_back(kShapedInputsName);
  }

  at::NoGradGuard no_grad;
  // One forward per file: TorchScript's profiling executor would spend most of the first call
  // profiling and optimising the graph (seconds on deep or wide models) for calls that never
  // come. The records are the same either way; the executor's setting is restored on return.
  torch::jit::GraphOptimizerEnabledGuard no_graph_optimisation(false);
  stopwatch.lap("read the inputs");
  // the model was loaded for this capture alone: no clone to keep it as it was
  ModelCapture capture = capture_model_in_place(model, request.module_paths, request.limits);
  stopwatch.lap("instrumented the model");
  capture.enable_stats(request.stats);
  if (request.save_path) capture.enable_saving(request.save_max_bytes);
  CaptureResult result;
  {
    auto scope = capture.enter();
    std::optional<Watchdog> watchdog;
    if (request.timeout_seconds) watchdog.emplace(capture, request);
    for (std::size_t i = 0; i < inputs.size(); ++i) {
      if (request.timeout_seconds) {
        const auto deadline =
            Clock::now() + std::chrono::duration_cast<Clock::duration>(
                               std::chrono::duration<double>(*request.timeout_seconds));
        capture.set_deadline(deadline);
        watchdog->arm(deadline, input_names[i]);
      }
      result.sources.files.push_back(input_names[i]);
      try {
        capture.forward(inputs[i]);
        result.sources.ends.push_back(capture.snapshots().size());
      } catch (const std::exception& e) {
        result.sources.ends.push_back(capture.snapshots().size());
        if (watchdog) watchdog->disarm();
        if (capture.timed_out())
          result.error = request.archive + ": the forward on " + input_names[i] +
                         " did not finish within " + seconds_text(*request.timeout_seconds) +
                         " s (--timeout); it was stopped at a module call";
        else if (out_of_memory(e))
          result.error =
              request.archive + ": out of memory while running the forward on " + input_names[i];
        else {
          const ForwardFailure failure = describe_forward_failure(e);
          result.error = request.archive + ": the model's forward raised on " + input_names[i] +
                         ": " + failure.reason;
          if (!failure.where.empty()) *result.error += "\n  at " + failure.where;
          result.error_report = failure.report;
        }
        break;
      }
      if (watchdog) watchdog->disarm();
      stopwatch.lap("ran the forward on " + input_names[i]);
    }
  }
  result.snapshots = capture.snapshots();
  result.summary = capture.summary();
  if (request.save_path) {
    save_tensors(*request.save_path, capture.saved_tensors());
    stopwatch.lap("saved the tensors");
  }
  return result;
}

}  // namespace vin::diagnostics
