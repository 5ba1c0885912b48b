// `vin-inspect capture` as one library call: load an archive, read the inputs, run the forward
// once per inputs file inside one capture, and return what was recorded.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "vin/diagnostics/capture_records.h"

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
};

/// What was captured. `error` is set when a forward raised: the records before it are kept.
struct CaptureResult {
  std::vector<TensorSnapshot> snapshots;
  CaptureSummary summary;
  std::optional<std::string> error;
};

/// Runs the request without autograd. Unreadable archives or inputs throw Error; bad devices
/// and unknown module paths throw UsageError; a forward that raises is reported in `error`.
CaptureResult capture_archive(const CaptureRequest& request);

}  // namespace vin::diagnostics
