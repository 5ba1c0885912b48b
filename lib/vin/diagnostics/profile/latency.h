// profile's latency line (contract 8, ProfileSummary.latency_ms) from the wall times of the timed
// forwards. Nothing here depends on LibTorch.
#pragma once

#include <vector>

#include "vin/diagnostics/records/profile_records.h"

namespace vin::diagnostics {

/// The statistics of `times_ms` (at least one time; throws std::invalid_argument for none).
LatencyStats latency_stats(std::vector<double> times_ms);

}  // namespace vin::diagnostics
