// The recorder behind every capture: module calls as whoever runs the model reports them (the
// observers instrumentation put into a TorchScript module's graphs, or the .pt2 interpreter's
// module calls), each call's inputs and output walked into bounded TensorSnapshots within the
// quotas, call indices per module, the consumers (tensor_consumers.h), the deadline, and the
// summary. It knows modules only by their paths (docs/capture.md, "Call indices and walks").
#pragma once

#include <ATen/core/ivalue.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "vin/diagnostics/capture/tensor_consumers.h"
#include "vin/diagnostics/records/capture_records.h"
#include "vin/diagnostics/run/stoppable_forward.h"

namespace vin::diagnostics {

class CallRecorder : public StoppableForward {
 public:
  using Kwargs = std::vector<std::pair<std::string, c10::IValue>>;

  /// `paths`: every module's path, the root's ("<root>") first, in named_modules() order;
  /// `requested`: the paths or patterns to record (text/module_selection.h), nothing for all.
  CallRecorder(std::vector<std::string> paths, std::optional<std::vector<std::string>> requested,
               CaptureLimits limits);
  ~CallRecorder() override;
  CallRecorder(const CallRecorder&) = delete;
  CallRecorder& operator=(const CallRecorder&) = delete;

  /// Turns recording on. Throws UsageError for a requested path the model does not have
  /// (naming the closest ones), or when recording is on already.
  void enter();
  /// Turns recording off and forgets calls begun and not ended; safe to call repeatedly.
  void close();
  /// A consumer of every reached tensor from now on, after those added before it.
  void add_consumer(std::shared_ptr<TensorConsumer> consumer);

  /// A call of module `index` (into `paths`) begins: its positional arguments (a tuple) walked
  /// under "args" and its keyword arguments under "kwargs" (only when there are some), then
  /// the consumers told. Past the deadline it throws Error (the forward stops) instead.
  void call_begins(std::size_t index, const c10::IValue& args, const Kwargs& kwargs = {});
  /// The innermost open call of module `index` returns `output` (walked under "output").
  void call_ends(std::size_t index, const c10::IValue& output);
  /// Stops the forward (throws Error) when the deadline has passed: a module call the recorder
  /// does not record checks it too.
  void check_deadline();
  /// Forgets the calls begun and not ended (a forward that raised ends none of them).
  void forget_pending_calls();

  void set_deadline(std::optional<std::chrono::steady_clock::time_point> deadline) override;
  bool timed_out() const override;

  /// snapshots() and summary(), copied from another thread while a forward may be running;
  /// nothing when the recorder stays busy for all of `patience`.
  std::optional<std::pair<std::vector<TensorSnapshot>, CaptureSummary>> copy_when_idle(
      std::chrono::milliseconds patience) const;
  /// Snapshots recorded so far, in capture order.
  const std::vector<TensorSnapshot>& snapshots() const;
  std::int64_t snapshot_count() const;
  /// Source-dtype bytes represented by all sampled values so far.
  std::int64_t sampled_bytes() const;
  bool active() const;
  /// "max_tensors" or "max_bytes" once that quota stopped recording for good.
  std::optional<std::string> stopped_by() const;
  CaptureSummary summary() const;
  const CaptureLimits& limits() const;
  /// every module's path, as given
  const std::vector<std::string>& paths() const;

  struct State;  // implementation (call_recorder.cpp)

 private:
  std::unique_ptr<State> state_;
};

}  // namespace vin::diagnostics
