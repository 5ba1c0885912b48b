// `vin-inspect profile` as one library call (contract 8): load an archive and read its inputs,
// run the warm-up and timed forwards as LibTorch runs them for any user, then one instrumented
// forward whose module calls, operator calls, FLOPs and allocations become the records.
#pragma once

#include "vin/diagnostics/profiling/profile_request.h"

namespace vin::diagnostics {

/// Runs the request without autograd. Unreadable archives or inputs throw Error; bad devices,
/// unknown module paths and more than one set of inputs throw UsageError; a forward that raises
/// or overruns its timeout is reported in `error`.
ProfileResult profile_archive(const ProfileRequest& request);

}  // namespace vin::diagnostics
