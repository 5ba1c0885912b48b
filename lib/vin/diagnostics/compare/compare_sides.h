// compare: where two runs diverge, module call by module call (docs/compare.md). Each side is an
// archive run on the same inputs (through the capture's instrumentation, with every tensor
// handed over whole) or a file of saved tensors (capture --save, scripts/eager_capture.py).
// Side A is captured first and kept (whole up to --max-compare-bytes, by its statistics past
// it); side B is then compared tensor by tensor as it is produced, so that only one side's
// tensors are ever held.
#pragma once

#include "vin/diagnostics/compare/compare_request.h"

namespace vin::diagnostics {

/// Runs or reads both sides and compares every pair: torch.isclose in float64 over the whole
/// tensors, with torch.testing.assert_close's default tolerances for the looser of the two
/// dtypes unless the request gives them. Throws Error for a side that cannot be read or loaded,
/// UsageError for bad module patterns or inputs that do not fit; a forward that raises sets
/// `error` (what was compared before it is kept).
CompareResult compare_sides(const CompareRequest& request);

}  // namespace vin::diagnostics
