// The columns of every `--format table` view, declared once: each column's header, alignment and
// the record fields its cells are made from. text_table builds its tables from these
// declarations; a unit test holds them to the field tables (record_fields: every field named
// exists, and every field of a viewed record is either shown or listed as left to the JSON
// formats) and to the header lines the tables print.
#pragma once

#include <string_view>
#include <vector>

#include "vin/diagnostics/tables/text_table.h"

namespace vin::diagnostics {

struct TableColumn {
  const char* header;
  TextTable::Align align;
  /// the fields of the view's record its cells show (several: a cell made of them; none: a
  /// value derived from other records, as a module's Size from its tensors)
  std::vector<const char*> fields;
};

/// One table: one row per `record`, its columns in the order printed (those a detail option adds
/// included), and the fields of `record` the table leaves to the JSON formats.
struct TableView {
  const char* name;
  const char* record;
  std::vector<TableColumn> columns;
  std::vector<const char*> not_shown;
};

/// Every table view: model, model tensors, config, capture, compare, profile, profile operators.
const std::vector<TableView>& table_views();

/// The view `name`; throws std::logic_error for another name.
const TableView& table_view(std::string_view name);

/// Adds the column `header` of `view` to `table`, with its declared alignment; throws
/// std::logic_error when the view has no such column.
void add_view_column(TextTable& table, const TableView& view, std::string_view header);

/// Adds every column of `view` in order, but those `header` names for which `shown` is false.
template <class Shown>
void add_view_columns(TextTable& table, const TableView& view, Shown shown) {
  for (const TableColumn& column : view.columns)
    if (shown(std::string_view(column.header))) table.add_column(column.header, column.align);
}

}  // namespace vin::diagnostics
