// capture_model: bounded tensor snapshots from inside TorchScript (ModelCapture; docs/capture.md).
//
// Python forward hooks do not fire for calls made inside TorchScript. Instead, the capture
// works on a clone of the caller's module (sharing its tensors; capture_model_in_place: on the
// module itself) whose graphs carry an observer operator: at the top and before the return of
// each submodule type's forward-named methods (the arguments, then the output), or, for types
// with scripted forward hooks and calls through module interfaces, around the call site
// (after any scripted forward pre-hooks, and after the forward hooks). The caller's module is
// never changed by capture_model. Run forwards through ModelCapture::forward; they are recorded
// while a Scope from enter() is alive (docs/capture.md, "How").
#pragma once

#include <torch/csrc/jit/api/module.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "vin/diagnostics/run/stoppable_forward.h"
#include "vin/diagnostics/capture/tensor_consumers.h"
#include "vin/diagnostics/records/capture_records.h"
#include "vin/diagnostics/run/forward_inputs.h"

namespace vin::diagnostics {

/// A capture of one model. Snapshots, byte accounting and per-module call indices are
/// cumulative across forwards and across entrances.
class ModelCapture : public StoppableForward {
 public:
  /// Recording for as long as it lives (like Python's `with capture:`); leaving deactivates,
  /// also during stack unwinding from a failed forward.
  class [[nodiscard]] Scope {
   public:
    explicit Scope(ModelCapture* capture) : capture_(capture) {}
    Scope(Scope&& other) noexcept : capture_(std::exchange(other.capture_, nullptr)) {}
    Scope(const Scope&) = delete;
    Scope& operator=(const Scope&) = delete;
    Scope& operator=(Scope&&) = delete;
    ~Scope() {
      if (capture_) capture_->close();
    }

   private:
    ModelCapture* capture_;
  };

  /// Where the observers go: into a clone of the module (sharing its tensors; the module is
  /// left as it was), or into the module's own graphs (capture_model_in_place).
  enum class Instrument { on_a_clone, in_place };

  /// Instruments `model` (a clone of it by default). `module_paths`: exact named_modules paths
  /// ("<root>" included) to record, or nothing for every module. Paths are checked by enter().
  ModelCapture(const torch::jit::Module& model,
               std::optional<std::vector<std::string>> module_paths, CaptureLimits limits,
               Instrument where = Instrument::on_a_clone);
  ~ModelCapture();
  ModelCapture(ModelCapture&&) noexcept;
  ModelCapture& operator=(ModelCapture&&) noexcept;
  ModelCapture(const ModelCapture&) = delete;
  ModelCapture& operator=(const ModelCapture&) = delete;

  /// Activates recording until the returned Scope ends. Throws UsageError for a module path the
  /// model does not have (naming the closest ones), or when the capture is already active.
  Scope enter();

  /// From now on hands every tensor the walks reach to `consumer` too, after the consumers
  /// added before it: capture --stats' NonfiniteCheck, --save's TensorSaver, compare's
  /// TensorForwarder, profile's recorder (tensor_consumers.h). The capture knows none of them.
  void add_consumer(std::shared_ptr<TensorConsumer> consumer);
  /// Deactivates recording and forgets invocations still pending; safe to call repeatedly.
  void close();

  /// Where the forward's `torch.jit.fork` tasks run.
  enum class ForkTasks {
    /// on LibTorch's inter-op threads, as any caller of the model runs them
    inter_op_threads,
    /// at the fork, on the forward's own thread, before the forward goes on: one thread then
    /// sees every module call and operator in the order they nest (profile's instrumented
    /// forward); results are the same, the parallelism is gone
    inline_at_fork,
  };

  /// Runs the model's forward on `inputs` through the instrumented clone, with the root's
  /// scripted forward pre-hooks and hooks around it as Module::operator() would run them.
  /// Records only while active. Exceptions from the model propagate; what was recorded stays.
  c10::IValue forward(const ForwardInputs& inputs, ForkTasks forks = ForkTasks::inter_op_threads);

  /// From now on an observer call after `deadline` stops the forward (it throws, and
  /// timed_out() turns true); nothing clears the deadline.
  void set_deadline(std::optional<std::chrono::steady_clock::time_point> deadline) override;
  /// Whether an observer stopped a forward at its deadline.
  bool timed_out() const override;
  /// snapshots() and summary(), copied from another thread while a forward may be running (a
  /// watchdog's view); nothing when the capture stays busy for all of `patience`.
  std::optional<std::pair<std::vector<TensorSnapshot>, CaptureSummary>> copy_when_idle(
      std::chrono::milliseconds patience) const;

  /// Snapshots recorded so far, in capture order (made from what the forwards staged: see
  /// call_recorder.cpp's StagedSnapshot; snapshot_count() makes none).
  const std::vector<TensorSnapshot>& snapshots() const;
  /// How many snapshots were recorded so far.
  std::int64_t snapshot_count() const;
  /// Source-dtype bytes represented by all sampled values so far.
  std::int64_t sampled_bytes() const;
  /// Whether recording is on (a Scope is alive).
  bool active() const;
  /// "max_tensors" or "max_bytes" once that quota stopped recording for good.
  std::optional<std::string> stopped_by() const;
  /// The summary record of what was captured so far.
  CaptureSummary summary() const;
  /// The quotas in force.
  const CaptureLimits& limits() const;

  struct State;  // implementation (model_capture.cpp)

 private:
  std::unique_ptr<State> state_;
};

/// Creates a capture of `model` (see ModelCapture). The model is not modified.
ModelCapture capture_model(const torch::jit::Module& model,
                           std::optional<std::vector<std::string>> module_paths = std::nullopt,
                           CaptureLimits limits = CaptureLimits());

/// Like capture_model, without the clone: the observers go into `model`'s own graphs, which
/// keep them after the capture ends (they then record nothing; the model computes what it did).
/// For a module loaded for the capture alone (vin-inspect's capture and compare): on a model of
/// thousands of modules the clone costs as much as the instrumentation.
ModelCapture capture_model_in_place(
    torch::jit::Module& model, std::optional<std::vector<std::string>> module_paths = std::nullopt,
    CaptureLimits limits = CaptureLimits());

}  // namespace vin::diagnostics
