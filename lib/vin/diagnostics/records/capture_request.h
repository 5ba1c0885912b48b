// What `vin-inspect capture` asks for and gets back: plain values that cross from the binary to
// the LibTorch plugin (capture_archive runs them). Nothing here depends on LibTorch.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "vin/diagnostics/records/capture_records.h"

namespace vin::diagnostics {

/// What to capture.
struct CaptureRequest {
  std::string archive;                                   ///< TorchScript archive
  std::vector<std::string> inputs;                       ///< one forward per file, in order
  std::optional<std::vector<std::string>> module_paths;  ///< nothing: every module
  CaptureLimits limits;
  std::string device = "cpu";  ///< map location of the archive and of the inputs
  bool eval = false;           ///< switch every module to eval mode first
  bool stats = false;          ///< compute TensorStats per snapshot (capture --stats)
  /// capture --quantized-engine: the backend of quantized operators ("qnnpack", "fbgemm",
  /// "onednn", "x86"), as torch.backends.quantized.engine; nothing: LibTorch's default
  std::optional<std::string> quantized_engine;
  /// capture --timeout: the longest one forward may run, in seconds
  std::optional<double> timeout_seconds;
  /// Called, from another thread, with what was captured so far when a forward overruns its
  /// timeout and cannot be stopped (it never reaches a module call); the process then ends with
  /// status 1. Without it such a forward ends the process with only a message.
  std::function<void(const struct CaptureResult&)> on_abandoned;
};

/// What was captured. `error` is set when a forward raised or overran its timeout: the records
/// before it are kept.
struct CaptureResult {
  std::vector<TensorSnapshot> snapshots;
  CaptureSummary summary;
  std::optional<std::string> error;  ///< one or two lines
  std::string error_report;          ///< a failed forward's whole TorchScript report (debug log)
  ForwardSources sources;            ///< which inputs file each forward's snapshots came from
};

}  // namespace vin::diagnostics
