// profile's latency line (contract 8, ProfileSummary.latency_ms) from the wall times of the timed
// forwards. Nothing here depends on LibTorch.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "vin/diagnostics/records/profile_records.h"

namespace vin::diagnostics {

/// The statistics of `times_ms` (at least one time; throws std::invalid_argument for none).
LatencyStats latency_stats(std::vector<double> times_ms);

/// The spread past which the timed runs are suspect: the slowest more than twice the fastest,
/// or a coefficient of variation (standard deviation / mean) past 20%.
inline constexpr double kWideSpreadRatio = 2.0;
inline constexpr double kWideSpreadVariation = 0.2;

/// What makes timed runs of `times_ms` after `warmup` forwards doubtful, a sentence each
/// (ProfileSummary::warnings): no warm-up (the first forward compiles the graph executor's
/// plans), and a wide spread (kWideSpreadRatio, kWideSpreadVariation; two runs or more).
std::vector<std::string> latency_warnings(const std::vector<double>& times_ms,
                                          std::int64_t warmup);

}  // namespace vin::diagnostics
