#include "vin/diagnostics/text/suggest.h"

#include <algorithm>
#include <numeric>

namespace vin::diagnostics {

std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  std::iota(row.begin(), row.end(), std::size_t{0});
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

std::vector<std::string> closest_matches(std::string_view word,
                                         const std::vector<std::string>& candidates,
                                         std::size_t limit, bool plausible_typos_only) {
  // a third of the longer name, at least 2: "modle" -> "model", "blocks.0.lni" -> "blocks.0.lin"
  std::vector<std::pair<std::size_t, std::size_t>> scored;  // (distance, index)
  for (std::size_t i = 0; i < candidates.size(); ++i) {
    const std::size_t d = edit_distance(word, candidates[i]);
    const std::size_t allowed =
        std::max<std::size_t>(2, std::max(word.size(), candidates[i].size()) / 3);
    if (d <= allowed || !plausible_typos_only) scored.emplace_back(d, i);
  }
  std::stable_sort(scored.begin(), scored.end(),
                   [](const auto& x, const auto& y) { return x.first < y.first; });
  std::vector<std::string> out;
  for (std::size_t k = 0; k < scored.size() && k < limit; ++k)
    out.push_back(candidates[scored[k].second]);
  return out;
}

}  // namespace vin::diagnostics
