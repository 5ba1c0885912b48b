// What the tables of the commands share (tables_detail: not for other folders): text from the
// inputs as a table shows it, numbers with separators, module trees drawn by depth.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "vin/diagnostics/records/record_value.h"

namespace vin::diagnostics::tables_detail {

inline constexpr std::size_t kColumnGap = 2;
/// Deeper modules are drawn at this indentation with their depth written out, so a 200-deep
/// model stays readable.
inline constexpr std::size_t kMaxIndentDepth = 12;

/// Text from the inputs (names, paths, values) as a table shows it: control characters
/// (newlines included) and invalid UTF-8 escaped, nothing cut, so that no input reaches the
/// terminal raw or starts a line of its own.
std::string shown(std::string_view text);
/// "1234567" -> "1,234,567".
std::string digits_with_separators(const std::string& digits);
/// A record value as a table shows it: integers with separators, a type marker as <type>.
std::string value_text(const Json& v);
/// A path as diff's table writes it; a saved record may hold anything there (JSON text then).
std::string path_text(const Json& path);
/// Display width of UTF-8 text: code points, not bytes.
std::size_t display_width(const std::string& text);
void rstrip(std::string& line);
/// "920 B", "1.7 KiB", "44.6 MiB": a size for people (the JSON formats carry the bytes).
std::string byte_size(std::int64_t bytes);
/// A module path's depth: 0 for the root.
std::size_t depth_of(const std::string& path);
/// Two spaces a level; past kMaxIndentDepth the depth is written out instead.
std::string indentation(std::size_t depth);
/// A module path as the tree shows it: indented, its last segment.
std::string tree_label(const std::string& path);

/// A tree that lacks some modules (profile's rows are the modules called, in call order: a
/// ModuleList is never called): each row hangs under its nearest ancestor among the rows before
/// it, named by the rest of its path ("stages.0" under the root when "stages" has no row).
struct TreeRow {
  std::size_t depth = 0;  ///< in the tree drawn
  std::size_t parent = SIZE_MAX;  ///< the row it hangs under; SIZE_MAX for a top row
  std::string name;
};
std::vector<TreeRow> tree_of_rows(const std::vector<std::string>& paths);

}  // namespace vin::diagnostics::tables_detail
