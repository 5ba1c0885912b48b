// The table views (output/table_views) against the field tables (records/record_fields) and
// against the header lines the tables print.
#include <doctest/doctest.h>

#include <set>
#include <string>
#include <vector>

#include "vin/diagnostics/tables/table_views.h"
#include "vin/diagnostics/tables/command_tables.h"
#include "vin/diagnostics/tables/text_table.h"
#include "vin/diagnostics/json/record_fields.h"

using namespace vin::diagnostics;

namespace {

// The headers of a rendered table's line `index`: its cells, split at runs of two spaces or more.
std::vector<std::string> header_cells(const std::string& table, std::size_t index) {
  std::size_t at = 0;
  for (std::size_t i = 0; i < index; ++i) at = table.find('\n', at) + 1;
  const std::string line = table.substr(at, table.find('\n', at) - at);
  std::vector<std::string> cells;
  std::string cell;
  for (std::size_t i = 0; i < line.size(); ++i) {
    if (line[i] == ' ' && (i + 1 < line.size() && line[i + 1] == ' ')) {
      if (!cell.empty()) cells.push_back(cell);
      cell.clear();
      while (i + 1 < line.size() && line[i + 1] == ' ') ++i;
      continue;
    }
    cell += line[i];
  }
  if (!cell.empty()) cells.push_back(cell);
  return cells;
}

std::vector<std::string> headers_of(const TableView& view, const std::set<std::string>& left_out) {
  std::vector<std::string> headers;
  for (const TableColumn& column : view.columns)
    if (!left_out.count(column.header)) headers.emplace_back(column.header);
  return headers;
}

}  // namespace

TEST_CASE("every table view names fields its record has, and decides on every one of them") {
  for (const TableView& view : table_views()) {
    CAPTURE(view.name);
    const RecordInfo& info = record_info(view.record);
    std::set<std::string> fields, decided;
    for (const FieldInfo& field : info.fields) fields.insert(field.name);
    for (const TableColumn& column : view.columns)
      for (const char* field : column.fields) {
        CAPTURE(column.header);
        CHECK_MESSAGE(fields.count(field), "no field ", field, " in ", view.record);
        decided.insert(field);
      }
    for (const char* field : view.not_shown) {
      CHECK_MESSAGE(fields.count(field), "no field ", field, " in ", view.record);
      CHECK_MESSAGE(!decided.count(field), field, " is both shown and not shown");
      decided.insert(field);
    }
    // a field added to the record must be shown by a column or left to the JSON formats here
    for (const std::string& field : fields)
      CHECK_MESSAGE(decided.count(field), "undecided: ", field);
  }
}

TEST_CASE("the model view's tensor rows use the model view's columns") {
  CHECK(headers_of(table_view("model tensors"), {}) == headers_of(table_view("model"), {}));
}

TEST_CASE("the tables print the headers their views declare") {
  const ModelMetadata model("pkg.Net", 0, 0, {ModuleMetadata("<root>", "pkg.Net", 0, 0, 0, true)});
  CHECK(header_cells(format_model_table(model), 2) ==
        headers_of(table_view("model"), {"Size", "Settings"}));

  ProfileRecords profile;
  ModuleProfile m;
  m.module_path = "<root>";
  m.module_type = "T";
  profile.modules.push_back(m);
  OperatorProfile o;
  o.name = "aten::add";
  profile.operators.push_back(o);
  const std::string table = format_profile_table(profile);
  CHECK(header_cells(table, 1) == headers_of(table_view("profile"), {}));
  CHECK(header_cells(table, 5) == headers_of(table_view("profile operators"), {}));

  CHECK_THROWS_AS(table_view("no such view"), std::logic_error);
  TextTable empty;
  CHECK_THROWS_AS(add_view_column(empty, table_view("model"), "Nope"), std::logic_error);
}
