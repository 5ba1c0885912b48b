// capture's table: one row per snapshot, then the summary.
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

constexpr std::size_t kTableValues = 4;

std::string join(const std::vector<std::string>& parts, const char* sep) {
  std::string out;
  for (std::size_t i = 0; i < parts.size(); ++i) out += (i ? sep : "") + parts[i];
  return out;
}

std::string sample_text(const SampleValue& v) {
  if (const auto* i = std::get_if<std::int64_t>(&v)) return std::to_string(*i);
  if (const auto* b = std::get_if<bool>(&v)) return *b ? "true" : "false";
  const double d = std::get<double>(v);
  // six significant digits are enough to read a table; the JSON formats carry every digit
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", d);
  if (std::isnan(d)) return "nan";
  if (std::isinf(d)) return d > 0 ? "inf" : "-inf";
  return buf;
}

std::string first_values(const TensorSnapshot& s) {
  if (s.sample_omission_reason()) return "(" + *s.sample_omission_reason() + ")";
  if (s.numel() == 0) return "(empty)";
  if (s.values().empty()) return "(no bytes left)";
  std::vector<std::string> parts;
  for (std::size_t i = 0; i < s.values().size() && i < kTableValues; ++i)
    parts.push_back(sample_text(s.values()[i]));
  std::string text = join(parts, " ");
  if (static_cast<std::int64_t>(parts.size()) < s.numel()) text += " ...";
  return text;
}

// min/max/mean for people, and a loud mark on tensors that hold NaN or infinity.
std::string stats_text(const TensorSnapshot& s) {
  if (!s.stats() || s.stats()->entries.empty()) return "";
  std::string text;
  std::int64_t nan = 0, inf = 0;
  for (const auto& [name, value] : s.stats()->entries) {
    if (name == "nan_count") nan = std::get<std::int64_t>(value);
    if (name == "inf_count") inf = std::get<std::int64_t>(value);
    if (name != "min" && name != "max" && name != "mean" && name != "true_count") continue;
    std::string v = "null";
    if (const auto* i = std::get_if<std::int64_t>(&value)) v = std::to_string(*i);
    if (const auto* d = std::get_if<double>(&value)) v = sample_text(SampleValue(*d));
    text += (text.empty() ? "" : " ") + name + "=" + v;
  }
  if (nan || inf)
    text = "NON-FINITE (" + std::to_string(nan) + " NaN, " + std::to_string(inf) + " inf) " + text;
  return text;
}

}  // namespace

std::string format_capture_table(const std::vector<TensorSnapshot>& snapshots,
                                 const CaptureSummary& summary, const ForwardSources* sources) {
  TextTable table;
  const bool with_sources = sources && sources->files.size() > 1;
  const bool with_stats = summary.with_stats;
  add_view_columns(table, table_view("capture"), [&](std::string_view header) {
    return (header != "Input" || with_sources) && (header != "Stats" || with_stats);
  });
  std::size_t forward = 0;
  for (std::size_t row_index = 0; row_index < snapshots.size(); ++row_index) {
    const TensorSnapshot& s = snapshots[row_index];
    std::vector<std::string> dims;
    for (auto d : s.shape()) dims.push_back(std::to_string(d));
    std::string dtype = s.dtype();
    if (dtype.rfind("torch.", 0) == 0) dtype = dtype.substr(6);
    if (s.device() != "cpu") dtype += " " + s.device();
    std::vector<std::string> row{s.module_path(),
                                 std::to_string(s.call_index()),
                                 to_string(s.direction()),
                                 join(s.tensor_path(), "."),
                                 "[" + join(dims, ", ") + "]",
                                 dtype,
                                 first_values(s)};
    if (with_stats) row.push_back(stats_text(s));
    if (with_sources) {
      while (forward + 1 < sources->ends.size() && row_index >= sources->ends[forward]) ++forward;
      const std::string& file = sources->files[std::min(forward, sources->files.size() - 1)];
      row.insert(row.begin(), std::filesystem::path(file).filename().string());
    }
    table.add_row(std::move(row));
  }
  std::string out = table.render() + '\n';
  out += std::string(table.width(), '=') + '\n';
  out += "Snapshots: " + with_thousands_separators(summary.snapshots) +
         "   Sampled bytes: " + with_thousands_separators(summary.sampled_bytes) +
         "   Stopped by: " + (summary.stopped_by ? *summary.stopped_by : "-") + '\n';
  if (with_stats) {
    out += "Checked tensors: " + with_thousands_separators(summary.checked_tensors) +
           "   Non-finite: " + with_thousands_separators(summary.nonfinite_tensors) + '\n';
    out += "First non-finite: ";
    if (const auto& at = summary.first_nonfinite)
      out += shown(at->module_path + " call " + std::to_string(at->call_index) + " " +
                   to_string(at->direction) + " " + join(at->tensor_path, ".")) +
             (at->recorded ? "" : " (past the snapshot quotas: no snapshot)") + '\n';
    else
      out += "none\n";
  }
  return out;
}

}  // namespace vin::diagnostics
