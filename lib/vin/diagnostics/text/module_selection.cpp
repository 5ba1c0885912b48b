#include "vin/diagnostics/text/module_selection.h"

#include <algorithm>
#include <unordered_set>

#include "vin/diagnostics/records/error.h"
#include "vin/diagnostics/text/printable.h"
#include "vin/diagnostics/text/suggest.h"

namespace vin::diagnostics {
namespace {

// Matches one character against the set starting at pattern[at] == '['. Returns the position
// past the set's ']' and whether `c` is in it, or npos when the set has no closing bracket.
std::size_t match_set(std::string_view pattern, std::size_t at, char c, bool& matched) {
  std::size_t i = at + 1;
  const bool negated = i < pattern.size() && pattern[i] == '!';
  if (negated) ++i;
  const std::size_t first = i;
  bool in_set = false;
  for (; i < pattern.size(); ++i) {
    if (pattern[i] == ']' && i > first) break;  // a ']' first in the set is itself
    if (i + 2 < pattern.size() && pattern[i + 1] == '-' && pattern[i + 2] != ']') {
      if (pattern[i] <= c && c <= pattern[i + 2]) in_set = true;
      i += 2;
    } else if (pattern[i] == c) {
      in_set = true;
    }
  }
  if (i >= pattern.size()) return std::string_view::npos;
  matched = in_set != negated;
  return i + 1;
}

}  // namespace

bool wildcard_match(std::string_view pattern, std::string_view text) {
  // greedy with one backtrack point (the last '*'), as glob matchers do
  std::size_t p = 0, t = 0;
  std::size_t star = std::string_view::npos, star_text = 0;
  while (t < text.size()) {
    if (p < pattern.size()) {
      const char c = pattern[p];
      if (c == '*') {
        star = p++;
        star_text = t;
        continue;
      }
      if (c == '?') {
        ++p;
        ++t;
        continue;
      }
      if (c == '[') {
        bool matched = false;
        const std::size_t next = match_set(pattern, p, text[t], matched);
        if (next != std::string_view::npos) {
          if (matched) {
            p = next;
            ++t;
            continue;
          }
        } else if (text[t] == '[') {  // an unclosed '[' is itself
          ++p;
          ++t;
          continue;
        }
      } else if (c == text[t]) {
        ++p;
        ++t;
        continue;
      }
    }
    if (star == std::string_view::npos) return false;
    p = star + 1;
    t = ++star_text;
  }
  while (p < pattern.size() && pattern[p] == '*') ++p;
  return p == pattern.size();
}

bool is_path_pattern(std::string_view argument) {
  return argument.find_first_of("*?[") != std::string_view::npos;
}

std::vector<std::string> select_module_paths(const std::vector<std::string>& arguments,
                                             const std::vector<std::string>& all_paths) {
  std::unordered_set<std::string> chosen;
  for (const std::string& argument : arguments) {
    bool any = false;
    for (const std::string& path : all_paths) {
      const bool hit =
          is_path_pattern(argument) ? wildcard_match(argument, path) : argument == path;
      if (hit) {
        chosen.insert(path);
        any = true;
      }
    }
    if (any) continue;
    // the option named first (issue 64: option errors name the option)
    std::string message = "--module '" + printable(argument, 200) + "': " +
                          (is_path_pattern(argument) ? "no module path matches it"
                                                     : "unknown module path");
    // for a pattern, the paths nearest its literal start (`layer4.*` -> near `layer4.`)
    const std::string_view literal = std::string_view(argument).substr(
        0, is_path_pattern(argument) ? argument.find_first_of("*?[") : argument.size());
    const std::string_view word = literal.empty() ? std::string_view(argument) : literal;
    auto near = closest_matches(word, all_paths, 3);
    // nothing that looks like a typo of it: still the nearest paths, and where the rest are
    const bool typo = !near.empty();
    if (!typo) near = closest_matches(word, all_paths, 3, /*plausible_typos_only=*/false);
    if (!near.empty()) {
      message += "; closest registered paths:";
      for (const auto& n : near) message += " '" + printable(n, 200) + "'";
    }
    if (!typo) message += "; run inspect-model to list them all";
    throw UsageError(message);
  }
  std::vector<std::string> selected;
  for (const std::string& path : all_paths)
    if (chosen.count(path)) selected.push_back(path);
  return selected;
}

}  // namespace vin::diagnostics
