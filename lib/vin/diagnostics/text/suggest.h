// "Did you mean ...?" for mistyped names (subcommands, module paths), as ninja does.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace vin::diagnostics {

/// Levenshtein distance between two strings (bytes).
std::size_t edit_distance(std::string_view a, std::string_view b);

/// Up to `limit` candidates closest to `word`, nearest first (ties in candidate order); with
/// `plausible_typos_only`, only those within a distance that still looks like a typo of `word`.
std::vector<std::string> closest_matches(std::string_view word,
                                         const std::vector<std::string>& candidates,
                                         std::size_t limit = 3, bool plausible_typos_only = true);

}  // namespace vin::diagnostics
