// profile's progress on a terminal's stderr: one line rewritten in place, cleared at the end and
// before any log line or message; nothing when stderr is not a terminal (a CI log, a file).
#pragma once

#include <atomic>
#include <cstdint>

#include "vin/diagnostics/profiling/profile_request.h"

namespace vin::cli {

class ProgressLine {
 public:
  ProgressLine();
  ~ProgressLine();
  ProgressLine(const ProgressLine&) = delete;
  ProgressLine& operator=(const ProgressLine&) = delete;

  /// Takes the line away (before a message, and at the end); any thread may call it.
  void clear();
  void show(diagnostics::ProfilePhase phase, std::int64_t done, std::int64_t total);

 private:
  bool on_;
  std::atomic<bool> shown_{false};  // also cleared from the watchdog's thread (on_abandoned)
};

/// Clears the progress line on the terminal now, if one is shown (log lines call it first).
void clear_progress_line();

}  // namespace vin::cli
