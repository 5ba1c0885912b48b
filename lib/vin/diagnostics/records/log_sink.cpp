#include "vin/diagnostics/records/log_sink.h"

#include <atomic>

namespace vin::diagnostics {
namespace {

std::atomic<LogSink> installed{nullptr};

}  // namespace

void set_log_sink(LogSink sink) { installed.store(sink); }

void log_line(LogLevel level, const std::string& message) {
  if (const LogSink sink = installed.load()) sink(level, message);
}

}  // namespace vin::diagnostics
