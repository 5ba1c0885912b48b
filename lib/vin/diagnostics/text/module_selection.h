// Which registered module paths a --module argument selects (capture, and compare): an exact
// path, or a pattern with shell wildcards matched against every path as Python's
// fnmatch.fnmatchcase matches (`*` also matches dots: `layer3.*` is everything below layer3).
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace vin::diagnostics {

/// Whether `text` matches `pattern`: `*` any characters (dots included), `?` one character,
/// `[abc]`, `[a-z]` and `[!abc]` one character of (or not of) a set; everything else itself.
/// A `[` without its `]` is itself. Linear in practice; no recursion.
bool wildcard_match(std::string_view pattern, std::string_view text);

/// Whether `argument` is a pattern (holds `*`, `?` or `[`) rather than a path.
bool is_path_pattern(std::string_view argument);

/// The paths of `all_paths` (in their order) that `arguments` select: each argument is an exact
/// path or a pattern. Throws UsageError naming an argument that selects nothing and the closest
/// registered paths.
std::vector<std::string> select_module_paths(const std::vector<std::string>& arguments,
                                             const std::vector<std::string>& all_paths);

}  // namespace vin::diagnostics
