#include "vin/diagnostics/tables/text_table.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <limits>
#include <string_view>
#include <unordered_map>
#include <variant>

#include "vin/diagnostics/tables/table_parts.h"
#include "vin/diagnostics/tables/table_views.h"
#include "vin/diagnostics/json/json_encoding.h"
#include "vin/diagnostics/text/printable.h"

namespace vin::diagnostics {
namespace tables_detail {

// Text from the inputs (names, paths, values) as a table shows it: control characters (newlines
// included) and invalid UTF-8 escaped, nothing cut, so that no input reaches the terminal raw or
// starts a line of its own.
std::string shown(std::string_view text) {
  return printable(text, std::numeric_limits<std::size_t>::max());
}

std::string digits_with_separators(const std::string& digits) {
  std::string out;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out.push_back(',');
    out.push_back(digits[i]);
  }
  return out;
}

std::string value_text(const Json& v) {
  // an integer past int64 (an exact count of FLOPs, a saved record's big integer) as its digits
  if (v.is_number_unsigned()) return digits_with_separators(std::to_string(v.get<std::uint64_t>()));
  if (is_big_integer(v)) {
    const std::string digits = big_integer_digits(v);
    return digits[0] == '-' ? "-" + digits_with_separators(digits.substr(1))
                            : digits_with_separators(digits);
  }
  if (v.is_number_integer()) return with_thousands_separators(v.get<std::int64_t>());
  if (v.is_object() && v.contains("type_marker") && v.size() == 1 && v["type_marker"].is_string())
    return "<" + v["type_marker"].get<std::string>() + ">";
  return dump_line(v);
}

// A path as diff's table writes it; a saved record may hold anything there (JSON text then).
std::string path_text(const Json& path) {
  if (path.is_string()) return path.get<std::string>();
  if (path.is_array()) {
    std::string out;
    for (const auto& p : path)
      out += (out.empty() ? "" : ".") + (p.is_string() ? p.get<std::string>() : dump_line(p));
    return out;
  }
  return path.is_null() ? "" : dump_line(path);
}

// Display width of UTF-8 text: code points, not bytes.
std::size_t display_width(const std::string& text) {
  return static_cast<std::size_t>(std::count_if(text.begin(), text.end(), [](char c) {
    return (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  }));
}

void rstrip(std::string& line) {
  while (!line.empty() && line.back() == ' ') line.pop_back();
}

std::size_t depth_of(const std::string& path) {
  if (path == kRootPath) return 0;
  return static_cast<std::size_t>(std::count(path.begin(), path.end(), '.')) + 1;
}

// Two spaces a level; past kMaxIndentDepth the depth is written out instead.
std::string indentation(std::size_t depth) {
  if (depth <= kMaxIndentDepth) return std::string(2 * depth, ' ');
  return std::string(2 * kMaxIndentDepth, ' ') + "[" + std::to_string(depth) + "] ";
}

std::string tree_label(const std::string& path) {
  const std::size_t depth = depth_of(path);
  return indentation(depth) + (depth == 0 ? path : path.substr(path.rfind('.') + 1));
}

std::vector<TreeRow> tree_of_rows(const std::vector<std::string>& paths) {
  std::unordered_map<std::string, std::size_t> row_of;
  std::vector<TreeRow> rows;
  for (const std::string& path : paths) {
    TreeRow row{0, SIZE_MAX, path};
    if (path != kRootPath) {
      const auto root = row_of.find(kRootPath);
      if (root != row_of.end()) row = {rows[root->second].depth + 1, root->second, path};
      for (auto dot = path.rfind('.'); dot != std::string::npos; dot = path.rfind('.', dot - 1)) {
        const auto ancestor = row_of.find(path.substr(0, dot));
        if (ancestor != row_of.end()) {
          row = {rows[ancestor->second].depth + 1, ancestor->second, path.substr(dot + 1)};
          break;
        }
        if (dot == 0) break;
      }
    }
    row_of.emplace(path, rows.size());
    rows.push_back(std::move(row));
  }
  return rows;
}

// "920 B", "1.7 KiB", "44.6 MiB": a size for people (the JSON formats carry the bytes)
std::string byte_size(std::int64_t bytes) {
  if (bytes < 1024) return std::to_string(bytes) + " B";
  const char* units[] = {"KiB", "MiB", "GiB", "TiB", "PiB"};
  double value = static_cast<double>(bytes) / 1024;
  std::size_t unit = 0;
  while (value >= 1024 && unit + 1 < std::size(units)) {
    value /= 1024;
    ++unit;
  }
  char text[32];
  std::snprintf(text, sizeof text, "%.1f %s", value, units[unit]);
  return text;
}

}  // namespace tables_detail

using namespace tables_detail;

std::string with_thousands_separators(std::int64_t value) {
  const bool negative = value < 0;
  // work on the unsigned magnitude so INT64_MIN is printed correctly
  std::uint64_t magnitude =
      negative ? ~static_cast<std::uint64_t>(value) + 1 : static_cast<std::uint64_t>(value);
  const std::string out = digits_with_separators(std::to_string(magnitude));
  return negative ? "-" + out : out;
}

void TextTable::add_column(std::string header, Align align) {
  headers_.push_back(std::move(header));
  aligns_.push_back(align);
}

void TextTable::add_row(std::vector<std::string> cells) {
  cells.resize(headers_.size());
  for (std::string& cell : cells) cell = shown(cell);
  rows_.push_back(std::move(cells));
}

std::vector<std::size_t> TextTable::column_widths() const {
  std::vector<std::size_t> widths;
  for (const auto& h : headers_) widths.push_back(display_width(h));
  for (const auto& row : rows_)
    for (std::size_t c = 0; c < row.size(); ++c)
      widths[c] = std::max(widths[c], display_width(row[c]));
  return widths;
}

std::size_t TextTable::width() const {
  const auto widths = column_widths();
  std::size_t total = 0;
  for (auto w : widths) total += w;
  return widths.empty() ? 0 : total + kColumnGap * (widths.size() - 1);
}

std::string cut_to(const std::string& text, std::size_t width) {
  const std::string ellipsis = "...";
  if (width <= ellipsis.size()) return ellipsis.substr(0, width);
  std::string out;
  std::size_t shown_width = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const bool starts_character = (static_cast<unsigned char>(text[i]) & 0xC0) != 0x80;
    if (starts_character && ++shown_width > width - ellipsis.size()) break;
    out += text[i];
  }
  return out + ellipsis;
}

std::size_t TextTable::fit(std::size_t max_width, const std::vector<Shrinkable>& shrinkable) {
  std::vector<std::size_t> widths = column_widths();
  std::size_t total = width();
  while (total > max_width) {
    const Shrinkable* widest = nullptr;
    std::size_t spare = 0;
    for (const Shrinkable& s : shrinkable) {
      const std::size_t least = std::max(s.min_width, display_width(headers_[s.column]));
      if (widths[s.column] > least && widths[s.column] - least > spare) {
        spare = widths[s.column] - least;
        widest = &s;
      }
    }
    if (!widest) break;
    --widths[widest->column];
    --total;
  }
  std::size_t cut = 0;
  for (auto& row : rows_)
    for (const Shrinkable& s : shrinkable)
      if (display_width(row[s.column]) > widths[s.column]) {
        row[s.column] =
            s.cut ? s.cut(row[s.column], widths[s.column]) : cut_to(row[s.column], widths[s.column]);
        ++cut;
      }
  return cut;
}

std::string TextTable::render() const {
  const auto widths = column_widths();
  auto render_row = [&](const std::vector<std::string>& cells) {
    std::string line;
    for (std::size_t c = 0; c < cells.size(); ++c) {
      const std::size_t pad = widths[c] - display_width(cells[c]);
      if (c > 0) line.append(kColumnGap, ' ');
      if (aligns_[c] == Align::right) line.append(pad, ' ');
      line += cells[c];
      if (aligns_[c] == Align::left) line.append(pad, ' ');
    }
    rstrip(line);
    return line;
  };
  std::string out = render_row(headers_) + '\n' + std::string(width(), '-') + '\n';
  for (const auto& row : rows_) out += render_row(row) + '\n';
  if (!out.empty()) out.pop_back();
  return out;
}

}  // namespace vin::diagnostics
