// profile's latency line (contract 8, ProfileSummary.latency_ms) from the wall times of the timed
// forwards. Nothing here depends on LibTorch.
#pragma once

#include <vector>

namespace vin::diagnostics {

/// min, median, mean, p90 and max of a set of times, in milliseconds.
struct LatencyStats {
  double min = 0;
  double median = 0;  ///< the middle value, or the mean of the two middle values
  double mean = 0;
  double p90 = 0;  ///< nearest rank: the ceil(0.9 · n)-th smallest
  double max = 0;
};

/// The statistics of `times_ms` (at least one time; throws std::invalid_argument for none).
LatencyStats latency_stats(std::vector<double> times_ms);

}  // namespace vin::diagnostics
