#include "vin/diagnostics/plugin/log_sink.h"

#include <atomic>
#include <cstdio>

namespace vin::diagnostics {
namespace {

std::atomic<LogSink> installed{nullptr};

}  // namespace

void set_log_sink(LogSink sink) { installed.store(sink); }

void log_line(LogLevel level, const std::string& message) {
  if (const LogSink sink = installed.load()) sink(level, message);
}

void StageStopwatch::lap(const std::string& stage) {
  const auto now = std::chrono::steady_clock::now();
  char took[64];
  std::snprintf(took, sizeof took, " in %.1f ms",
                std::chrono::duration<double, std::milli>(now - last_).count());
  log_line(LogLevel::debug, command_ + ": " + stage + took);
  last_ = now;
}

}  // namespace vin::diagnostics
