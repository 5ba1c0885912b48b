#include "vin/diagnostics/profile/latency.h"

#include <algorithm>
#include <numeric>
#include <stdexcept>

namespace vin::diagnostics {

LatencyStats latency_stats(std::vector<double> times_ms) {
  if (times_ms.empty()) throw std::invalid_argument("latency_stats of no times");
  std::sort(times_ms.begin(), times_ms.end());
  const std::size_t n = times_ms.size();
  LatencyStats s;
  s.min = times_ms.front();
  s.max = times_ms.back();
  s.median = n % 2 ? times_ms[n / 2] : (times_ms[n / 2 - 1] + times_ms[n / 2]) / 2;
  s.mean = std::accumulate(times_ms.begin(), times_ms.end(), 0.0) / static_cast<double>(n);
  // nearest rank, in integers: ceil(9n / 10), at least 1
  const std::size_t rank = std::max<std::size_t>(1, (9 * n + 9) / 10);
  s.p90 = times_ms[rank - 1];
  return s;
}

}  // namespace vin::diagnostics
