// Plain-text tables for people (`--format table`): the engine (aligned columns fitted to a
// width, thousands separators); each command's table is command_tables.h's.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>


namespace vin::diagnostics {

/// `text` cut to `width` display columns, its end replaced by "...".
std::string cut_to(const std::string& text, std::size_t width);

/// 1234567 -> "1,234,567"; negative numbers keep their sign.
std::string with_thousands_separators(std::int64_t value);

/// Columns of text, each left- or right-aligned, padded to the widest cell.
class TextTable {
 public:
  enum class Align { left, right };

  void add_column(std::string header, Align align);
  /// A row with one cell per column (missing cells are blank).
  void add_row(std::vector<std::string> cells);
  /// Header, a rule, the rows; lines joined by '\n', each without trailing blanks.
  std::string render() const;
  /// Width of the rendered lines (for rules drawn around the table).
  std::size_t width() const;

  /// A column that fit() may narrow, down to `min_width` (at least its header's). `cut`: how a
  /// cell is cut to a width (nothing: its end replaced by "...").
  struct Shrinkable {
    std::size_t column;
    std::size_t min_width;
    std::string (*cut)(const std::string& cell, std::size_t width) = nullptr;
  };
  /// Narrows the table towards `max_width` (the rows added so far): the shrinkable column with
  /// the most width to give loses a character at a time until the lines fit or none has any
  /// left; the cells wider than their column are then cut, ending in "...". Returns how many
  /// cells were cut.
  std::size_t fit(std::size_t max_width, const std::vector<Shrinkable>& shrinkable);

 private:
  std::vector<std::size_t> column_widths() const;

  std::vector<std::string> headers_;
  std::vector<Align> aligns_;
  std::vector<std::vector<std::string>> rows_;
};

}  // namespace vin::diagnostics
