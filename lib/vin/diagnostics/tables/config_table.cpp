// inspect-config's table: the field tree with its types and values.
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

std::string format_config_table(const ModelStructureSpec& spec) {
  TextTable table;
  add_view_columns(table, table_view("config"), [](std::string_view) { return true; });
  for (const auto& f : spec.fields()) {
    std::string label = indentation(f.path().size() - 1);
    // a model held in a sequence has no record of its own: show its index beside its fields
    if (f.path().size() >= 2) {
      const std::string& parent = f.path()[f.path().size() - 2];
      if (!parent.empty() && parent.find_first_not_of("0123456789") == std::string::npos)
        label += "[" + parent + "] ";
    }
    label += f.path().back();
    std::string value;
    if (const auto* marker = std::get_if<TypeMarker>(&f.value()))
      value = "<" + marker->type + ">";
    else if (const auto* text = std::get_if<std::string>(&f.value()))
      value = dump_line(Json(*text));
    else
      value = dump_line(to_json(f.value()));
    table.add_row({label, f.declared_type().value_or("-"), f.configured_type(), value});
  }
  std::string out = "Config: " + shown(spec.config_type().value_or("(untagged)")) +
                    "   Target: " + shown(spec.target_type().value_or("-")) + '\n';
  const std::string rule(table.width(), '=');
  out += rule + '\n' + table.render() + '\n' + rule + '\n';
  out += "Fields: " + with_thousands_separators(static_cast<std::int64_t>(spec.fields().size())) +
         '\n';
  return out;
}

}  // namespace vin::diagnostics
