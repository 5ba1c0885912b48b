// diff's table: the sides, one line per change, the counts.
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

// What an added or removed item was, in a few words.
std::string item_summary(const Json& item) {
  if (!item.is_object() || item.contains("type_marker")) return value_text(item);  // a value
  if (item.contains("direct_parameters"))                                          // a module
    return item.value("module_type", "") + ", " + value_text(item["direct_parameters"]) +
           " parameters";
  if (item.contains("configured_type"))  // a configuration field
    return item.value("configured_type", "") + " = " + value_text(item["value"]);
  if (item.contains("dtype"))  // a tensor
    return item.value("kind", "") + " " + item.value("dtype", "") + " " + dump_line(item["shape"]);
  if (item.contains("arguments"))  // a method
    return std::to_string(item["arguments"].size()) + " arguments -> " + item.value("returns", "");
  return dump_line(item);
}

}  // namespace

std::string format_diff_table(const RecordSet& old_set, const RecordSet& new_set,
                              const std::vector<Change>& changes,
                              const std::vector<std::string>& compared) {
  const DiffSummary summary = summarize(old_set, new_set, changes, compared);
  std::string out = "--- " + shown(old_set.source) + "\n+++ " + shown(new_set.source) + "\n";
  for (const auto& c : changes) {
    const std::string where = c.subject + (c.path.is_null() ? "" : " " + path_text(c.path));
    if (c.kind == "changed" || c.kind == "environment") {
      const std::string field = c.field.is_string() ? " " + c.field.get<std::string>() : "";
      const std::string gate = c.kind == "environment" ? " (environment)"
                               : !c.within_tolerance   ? ""
                               : *c.within_tolerance   ? " (within tolerance)"
                                                       : " (beyond tolerance)";
      out += "~ " +
             shown(where + ":" + field + " " + value_text(c.old_value) + " -> " +
                   value_text(c.new_value)) +
             gate + "\n";
    } else {
      out +=
          (c.kind == "added" ? "+ " : "- ") +
          shown(where + " (" + item_summary(c.kind == "added" ? c.new_value : c.old_value) + ")") +
          "\n";
    }
  }
  std::string kinds;
  for (const auto& k : compared) kinds += (kinds.empty() ? "" : ", ") + k;
  out += "compared: " + kinds + "\n";
  out += std::string(summary.identical ? "identical" : "different") + ": " +
         std::to_string(summary.added) + " added, " + std::to_string(summary.removed) +
         " removed, " + std::to_string(summary.changed) + " changed" +
         (summary.within_tolerance
              ? " (" + std::to_string(summary.within_tolerance) + " within tolerance)"
              : std::string()) +
         (summary.environment
              ? "; " + std::to_string(summary.environment) +
                    " environment (profiles measured with other threads, device, inputs or "
                    "LibTorch)"
              : std::string()) +
         "\n";
  return out;
}

}  // namespace vin::diagnostics
