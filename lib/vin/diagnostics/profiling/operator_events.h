// profile's view of what LibTorch does inside one forward, besides the module calls: every
// operator call the dispatcher makes (RecordFunction callbacks, the mechanism torch.profiler
// uses) with its shapes and FLOPs, and every allocation and free on the profiled device
// (LibTorch's memory reporting, which torch.profiler's profile_memory uses; CPU and CUDA
// allocators both report). Only the thread that installs it is observed.
#pragma once

#include <c10/core/Device.h>

#include <cstdint>
#include <memory>
#include <vector>

#include "vin/diagnostics/records/flop_count.h"

namespace vin::diagnostics {

/// Hears the events of the thread that installed OperatorEvents, in the order they happen.
class OperatorEventSink {
 public:
  virtual ~OperatorEventSink() = default;
  /// An operator call begins (`name`: "aten::conv2d"), with the shapes of its tensor arguments
  /// when asked for.
  virtual void operator_started(const char* name,
                                std::vector<std::vector<std::int64_t>> input_shapes) = 0;
  /// The innermost operator call begun ends; `flops` by flop_rules (0 where it counts none).
  /// `raised`: it ends because an exception leaves it (LibTorch ends a call's RecordFunction
  /// as the exception unwinds it).
  virtual void operator_ended(FlopCount flops, bool raised) = 0;
  /// Bytes allocated (positive) or freed (negative) on the device. May come from the tasks
  /// LibTorch launches for the forward (intra-op workers), on other threads; never after
  /// OperatorEvents ends.
  virtual void memory_changed(std::int64_t bytes) = 0;
};

/// While alive, reports the calling thread's operator calls and the device's allocations to
/// `sink`. One at a time per thread. `input_shapes`: pass every operator's argument shapes (the
/// trace's); counted operators get theirs read in any case.
class OperatorEvents {
 public:
  OperatorEvents(OperatorEventSink& sink, c10::Device device, bool input_shapes);
  ~OperatorEvents();
  OperatorEvents(const OperatorEvents&) = delete;
  OperatorEvents& operator=(const OperatorEvents&) = delete;

  /// Whether operators ran meanwhile on threads that did not install it but carry its callbacks:
  /// the tasks LibTorch launched for the forward (torch.jit.fork, the continuation of a wait),
  /// whose calls are not reported. (Any such thread of the process counts.)
  bool saw_other_threads() const;

  struct State;

 private:
  std::unique_ptr<State> state_;
};

}  // namespace vin::diagnostics
