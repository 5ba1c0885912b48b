// compare's table: the first divergence, the worst pairs, one-sided tensors and the counts.
#include "vin/diagnostics/tables/command_tables.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <limits>
#include <string_view>
#include <unordered_map>
#include <variant>

#include "vin/diagnostics/json/json_encoding.h"
#include "vin/diagnostics/tables/table_parts.h"
#include "vin/diagnostics/tables/table_views.h"
#include "vin/diagnostics/tables/text_table.h"
#include "vin/diagnostics/text/printable.h"

namespace vin::diagnostics {

using namespace tables_detail;

namespace {

constexpr std::size_t kWorstPairs = 20;

// a tensor path as the table shows it: output.1.0
std::string path_text(const std::vector<std::string>& tensor_path) {
  std::string out;
  for (const auto& p : tensor_path) out += (out.empty() ? "" : ".") + p;
  return out;
}

std::string key_text(const TensorKey& key) {
  std::string out =
      key.module_path + " #" + std::to_string(key.call_index) + " " + to_string(key.direction);
  if (!key.tensor_path.empty()) out += "." + path_text(key.tensor_path);
  return shown(out);
}

std::string error_text(const std::optional<double>& e) {
  if (!e) return "-";
  char text[32];
  std::snprintf(text, sizeof text, "%.3g", *e);
  return text;
}

std::string dtype_text(const std::optional<std::string>& d) {
  if (!d) return "-";
  return d->rfind("torch.", 0) == 0 ? d->substr(6) : *d;
}

// how bad a pair is: the share of mismatching elements, then the largest error
double badness(const TensorComparison& c) {
  const double share = c.mismatches && c.numel > 0 ? double(*c.mismatches) / double(c.numel) : 1.0;
  return share * 1e6 + std::min(c.max_abs_error.value_or(0.0), 1e5);
}

}  // namespace

std::string format_comparison_table(const CompareResult& result) {
  const ComparisonSummary& s = result.summary;
  std::string out;
  if (s.first_divergence)
    out += "First divergence: " + key_text(*s.first_divergence) + "\n";
  else
    out += "No divergence beyond tolerance.\n";
  std::vector<const TensorComparison*> shown;
  for (const auto& c : result.comparisons)
    if (!c.within_tolerance) shown.push_back(&c);
  std::stable_sort(shown.begin(), shown.end(), [](const auto* a, const auto* b) {
    return !a->only_in && !b->only_in && badness(*a) > badness(*b);
  });
  if (!shown.empty()) {
    TextTable table;
    add_view_columns(table, table_view("compare"), [](std::string_view) { return true; });
    for (std::size_t i = 0; i < shown.size() && i < kWorstPairs; ++i) {
      const TensorComparison& c = *shown[i];
      const auto side = [](const auto& shape, const auto& dtype) {
        if (!shape) return std::string("-");
        std::string dims;
        for (const auto d : *shape) dims += (dims.empty() ? "" : ", ") + std::to_string(d);
        return dtype_text(dtype) + "[" + dims + "]";
      };
      std::string mism = c.mismatches ? with_thousands_separators(*c.mismatches) + " of " +
                                            with_thousands_separators(c.numel)
                                      : (c.only_in ? "only in " + *c.only_in : "stats");
      if (c.structure_differs) mism = "structure: " + mism;
      std::string tensor = key_text(c.key);
      if (c.tensor_path_b) tensor += " (B: " + tables_detail::shown(path_text(*c.tensor_path_b)) + ")";
      table.add_row({tensor, side(c.shape_a, c.dtype_a), side(c.shape_b, c.dtype_b), mism,
                     error_text(c.max_abs_error), error_text(c.max_rel_error),
                     error_text(c.atol) + "/" + error_text(c.rtol)});
    }
    out += table.render() + "\n";
    if (shown.size() > kWorstPairs)
      out += "... and " + std::to_string(shown.size() - kWorstPairs) + " more beyond tolerance\n";
  }
  out += std::to_string(s.pairs) + " pairs: " + std::to_string(s.within) + " within tolerance, " +
         std::to_string(s.beyond) + " beyond; only in A: " + std::to_string(s.only_in_a) +
         ", only in B: " + std::to_string(s.only_in_b);
  if (s.statistics_only) out += "; by statistics only: " + std::to_string(s.statistics_only);
  if (s.structure_differences)
    out += "; structure differences (calls a .pt and a .pt2 show differently): " +
           std::to_string(s.structure_differences);
  out += "\n";
  return out;
}

}  // namespace vin::diagnostics
