#include "vin/diagnostics/profile/latency.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
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

std::vector<std::string> latency_warnings(const std::vector<double>& times_ms,
                                          std::int64_t warmup) {
  std::vector<std::string> out;
  if (times_ms.empty()) return out;
  if (warmup == 0)
    out.push_back(
        "--warmup 0: the first timed forward also compiled the graph executor's plans, so the "
        "latency is not the model's alone; warm up with --warmup 3 or more");
  if (times_ms.size() < 2) return out;
  const LatencyStats s = latency_stats(times_ms);
  double squares = 0;
  for (const double t : times_ms) squares += (t - s.mean) * (t - s.mean);
  const double variation =
      s.mean > 0 ? std::sqrt(squares / static_cast<double>(times_ms.size())) / s.mean : 0;
  if ((s.min > 0 && s.max > kWideSpreadRatio * s.min) || variation > kWideSpreadVariation) {
    char text[2048];  // room for any three doubles (GCC 14 and 16 check snprintf lengths)
    std::snprintf(text, sizeof text,
                  "the timed forwards spread widely (min %.3f ms, max %.3f ms, coefficient of "
                  "variation %.0f%%): other work on the machine, frequency scaling or too little "
                  "warm-up; the median is the figure to compare, or run with more --runs",
                  s.min, s.max, variation * 100);
    out.emplace_back(text);
  }
  return out;
}

}  // namespace vin::diagnostics
