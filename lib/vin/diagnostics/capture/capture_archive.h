// `vin-inspect capture` as one library call: load an archive, read the inputs, run the forward
// once per inputs file inside one capture, and return what was recorded.
#pragma once

#include "vin/diagnostics/capture/capture_request.h"

namespace vin::diagnostics {

/// Runs the request without autograd. Unreadable archives or inputs throw Error; bad devices
/// and unknown module paths throw UsageError; a forward that raises is reported in `error`. A
/// forward that runs past `timeout_seconds` is stopped at its next module call and reported in
/// `error`; one that reaches no module call within a second more goes to `on_abandoned`.
CaptureResult capture_archive(const CaptureRequest& request);

}  // namespace vin::diagnostics
