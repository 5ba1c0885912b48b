// What the forward runner needs of whatever observes a forward: a way to make the forward stop
// itself at its next module call once a deadline has passed (--timeout), and whether it did. ModelCapture is one;
// forward_runner knows only this, so the runner and the recorder do not depend on each other.
#pragma once

#include <chrono>
#include <optional>

namespace vin::diagnostics {

class StoppableForward {
 public:
  virtual ~StoppableForward() = default;
  /// From now on an observer call after `deadline` stops the forward (it throws); nothing clears
  /// the deadline.
  virtual void set_deadline(std::optional<std::chrono::steady_clock::time_point> deadline) = 0;
  /// Whether an observer stopped a forward at its deadline.
  virtual bool timed_out() const = 0;
};

}  // namespace vin::diagnostics
