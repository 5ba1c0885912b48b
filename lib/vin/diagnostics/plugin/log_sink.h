// Where the library's log lines go. The library has no logger of its own: the program that uses
// it (the vin-inspect binary, which logs with spdlog) installs a sink; without one, lines are
// dropped. The LibTorch plugin gets the binary's sink through its table, so that LibTorch's own
// warnings and the capture's notes reach the same stderr log, at the level the user chose.
#pragma once

#include <chrono>
#include <string>
#include <utility>

namespace vin::diagnostics {

/// `model_output`: what the model itself prints (TorchScript's `print`), written as it is, never
/// filtered by level (stdout carries records only).
enum class LogLevel { debug, info, warn, model_output };

/// Receives one log line.
using LogSink = void (*)(LogLevel level, const std::string& message);

/// Installs `sink` for this image (the binary, or the plugin); null drops lines.
void set_log_sink(LogSink sink);

/// Sends a line to the installed sink, if any.
void log_line(LogLevel level, const std::string& message);

/// Where a command's time goes, for `--log-level debug`: each lap logs one line,
/// "COMMAND: STAGE in 12.3 ms", the time since the last lap (or since it was made).
class StageStopwatch {
 public:
  explicit StageStopwatch(std::string command) : command_(std::move(command)) {}
  void lap(const std::string& stage);

 private:
  std::string command_;
  std::chrono::steady_clock::time_point last_ = std::chrono::steady_clock::now();
};

}  // namespace vin::diagnostics
