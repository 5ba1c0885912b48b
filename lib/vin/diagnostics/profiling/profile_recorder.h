// profile's recorder of the instrumented forward (profile_archive.cpp's phase 3): module calls
// from a capture's recorder, operator calls and allocations from OperatorEvents, an exported
// program's nodes from its interpreter, all into one ProfileBuilder; and what a ModuleProfile
// says of each module before it runs. Internal to the profiling library.
#pragma once

#include <torch/csrc/jit/api/module.h>

#include <chrono>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <unordered_map>
#include <utility>
#include <vector>

#include "vin/diagnostics/capture/tensor_consumers.h"
#include "vin/diagnostics/capture/tensor_sampling.h"
#include "vin/diagnostics/export_run/program_runner.h"
#include "vin/diagnostics/profile/profile_builder.h"
#include "vin/diagnostics/profiling/operator_events.h"
#include "vin/diagnostics/profiling/profile_request.h"
#include "vin/diagnostics/run/forward_runner.h"

namespace vin::diagnostics::profiling {

using Clock = std::chrono::steady_clock;

inline double ms_between(Clock::time_point from, Clock::time_point to) {
  return std::chrono::duration<double, std::milli>(to - from).count();
}

// What a ModuleProfile says of a module before it runs: its type and its parameters' elements
// (registered in it and below it, each tensor once), by its path (named_modules' first one, as
// the capture names it).
struct ModuleFacts {
  std::string type;
  std::int64_t parameters = 0;
};

/// A TorchScript module's facts by path, each path once in named_modules() order into `paths`.
std::unordered_map<std::string, ModuleFacts> module_facts(const torch::jit::Module& model,
                                                          std::vector<std::string>& paths);
/// The same of an exported program: its modules as inspect-model describes them (types where a
/// node of the module ran), each one's parameters those whose name is under its path (tied
/// names once).
std::unordered_map<std::string, ModuleFacts> program_facts(const export_run::ProgramRunner& runner,
                                                           std::vector<std::string>& paths);

// The instrumented forward's events, in the order they happen, into one ProfileBuilder: module
// calls from the capture's observers (the tensors their walks reach give the shapes), operator
// calls and allocations from OperatorEvents. Only the forward's own thread is attributed (the
// forward runs its torch.jit.fork tasks inline, so they are on it); a forward that continues
// elsewhere is refused. Allocations come from every thread working for the forward.
class ProfileRecorder final : public TensorConsumer, public OperatorEventSink {
 public:
  // `request`: its options (spans, --module, --nested-operators), used only while
  // profile_archive runs
  ProfileRecorder(std::unordered_map<std::string, ModuleFacts> facts, c10::Device device,
                  const ProfileRequest& request)
      : facts_(std::move(facts)), device_(device), request_(request) {}

  // the time every event's is counted from (the profile's first forward's start)
  void count_from(Clock::time_point origin) { origin_ = origin; }

  // what each event costs, taken off the calls' times from the next forward on
  void subtract(InstrumentationCost cost) { cost_ = cost; }

  // an instrumented forward begins on this thread: what an earlier one recorded is dropped
  void start() {
    std::lock_guard<std::mutex> lock(mutex_);
    forward_thread_ = std::this_thread::get_id();
    builder_ = ProfileBuilder();
    builder_.keep_spans(request_.trace);
    builder_.operators_inside_modules_only(request_.module_paths.has_value());
    builder_.nested_operators(request_.nested_operators);
    builder_.subtract_instrumentation(cost_);
    walked_.clear();
    other_threads_ = false;
    failure_.reset();
  }
  double elapsed_ms() const { return ms_between(origin_, Clock::now()); }
  ProfileBuilder& builder() { return builder_; }

  bool wants_every_tensor() const override { return true; }
  bool replaces_snapshots() const override { return true; }
  void take(ReachedTensor& reached) override {
    if (!on_forward_thread()) return;
    // a nested tensor's shape as capture records it (-1 where its components differ)
    walked_.push_back(snapshot_shape(reached.tensor).first);
  }
  // On CUDA an operator returns once its kernels are queued: the device is synchronised at each
  // operator's end and each module call's start and end, so that their times are the device's
  // (the instrumented forward runs its kernels one after the other; phase 2's times do not).
  void call_begun(const std::string& path, std::int64_t) override {
    if (!on_forward_thread()) return;
    guarded([&] {
      synchronize();
      const ModuleFacts& f = facts_[path];
      builder_.enter_module(path, f.type, f.parameters, std::exchange(walked_, {}), elapsed_ms());
    });
  }
  void call_returned(const std::string&, std::int64_t) override {
    if (!on_forward_thread()) return;
    guarded([&] {
      synchronize();
      builder_.exit_module(std::exchange(walked_, {}), elapsed_ms());
    });
  }

  // a node of an exported program runs (before the operators it dispatches): an operator call
  // named by its target (ProfileBuilder's graph_node)
  void node_started(const std::string& label) {
    if (!on_forward_thread()) return;
    guarded([&] { builder_.start_operator(label, elapsed_ms(), {}, /*graph_node=*/true); });
  }
  void node_ended() {
    if (!on_forward_thread()) return;
    guarded([&] {
      synchronize();
      builder_.end_operator(0, elapsed_ms());
    });
  }

  void operator_started(const char* name, Shapes input_shapes) override {
    guarded([&] { builder_.start_operator(name, elapsed_ms(), std::move(input_shapes)); });
  }
  void operator_ended(FlopCount flops, bool raised) override {
    guarded([&] {
      if (!raised) synchronize();  // not while an exception leaves the operator
      builder_.end_operator(flops, elapsed_ms(), raised);
    });
  }
  void memory_changed(std::int64_t bytes) override {
    guarded([&] { builder_.memory(bytes, elapsed_ms()); });
  }

  /// Why the events cannot be attributed, if they cannot: module calls, or operators
  /// (`operators_elsewhere`: OperatorEvents::saw_other_threads), on other threads (the rest of
  /// a forward that a wait on something not forked by it suspended continues on LibTorch's
  /// inter-op threads), or a failure inside a callback (LibTorch swallows what a RecordFunction
  /// callback throws).
  std::optional<std::string> failure(bool operators_elsewhere) const {
    std::lock_guard<std::mutex> lock(mutex_);
    if (other_threads_ || operators_elsewhere)
      return std::string(
          "the forward ran on other threads (a wait that continued elsewhere), "
          "which profile cannot attribute");
    return failure_;
  }

 private:
  // waits for the device's queued kernels (CUDA), a span of its own in the trace
  void synchronize() {
    if (!device_.is_cuda()) return;
    const double start = elapsed_ms();
    synchronize_device(device_);
    builder_.device_synchronised(start, elapsed_ms());
  }
  bool on_forward_thread() {
    if (std::this_thread::get_id() == forward_thread_) return true;
    std::lock_guard<std::mutex> lock(mutex_);
    other_threads_ = true;
    return false;
  }
  // runs `event` under the lock; the first exception is kept for failure() instead of reaching
  // LibTorch (which would log and drop it, leaving the builder's stacks unbalanced)
  template <class Event>
  void guarded(Event&& event) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (failure_) return;
    try {
      event();
    } catch (const std::exception& e) {
      failure_ = std::string("profile could not record an event: ") + e.what();
    }
  }

  std::unordered_map<std::string, ModuleFacts> facts_;
  c10::Device device_;
  std::thread::id forward_thread_;
  Clock::time_point origin_ = Clock::now();
  const ProfileRequest& request_;  // read only while profile_archive runs
  InstrumentationCost cost_;
  Shapes walked_;  // the shapes of the walk that ended last, for the call it began or ended
  mutable std::mutex mutex_;  // allocations may be reported from tasks on other threads
  bool other_threads_ = false;
  std::optional<std::string> failure_;
  ProfileBuilder builder_;
};

}  // namespace vin::diagnostics::profiling
