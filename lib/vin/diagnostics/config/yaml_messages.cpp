#include "vin/diagnostics/config/yaml_messages.h"

#include <utility>

#include "vin/diagnostics/text/printable.h"

namespace vin::diagnostics {
namespace {

// yaml-cpp's messages (the start of each, as 0.7 to 0.9 write them) and the project's words.
// An entry whose words end in ": " is followed by what yaml-cpp's message names after its
// start (the escape character, the code point).
constexpr std::pair<std::string_view, std::string_view> kProblems[] = {
    {"end of sequence flow not found", "a '[' sequence is not closed"},
    {"end of map flow not found", "a '{' mapping is not closed"},
    {"end of sequence not found",
     "a line that fits in no sequence here (entries indented unevenly?)"},
    {"end of map not found", "a line that fits in no mapping here (keys indented unevenly?)"},
    {"illegal flow end", "a ']' or '}' that closes nothing open"},
    {"illegal map value", "a ':' where no key can stand"},
    {"illegal map key", "a '?' key where none can stand"},
    {"illegal block entry", "a '- ' entry where no sequence can stand"},
    {"unexpected scalar", "a value where none can stand"},
    {"illegal EOF in scalar", "the file ends inside a quoted value"},
    {"illegal document indicator in scalar", "a '---' or '...' line inside a quoted value"},
    {"illegal character in scalar", "a character a value may not hold here"},
    {"unknown escape character: ", "an unknown escape sequence, \\"},
    {"bad character found while scanning hex number", "an escape's hexadecimal digits are not"},
    {"invalid unicode: ", "an escape that names no Unicode character: "},
    {"the referenced anchor is not defined", "an alias (*name) that names no anchor"},
    {"anchor not found after &", "'&' without an anchor name"},
    {"alias not found after *", "'*' without an alias name"},
    {"illegal character found while scanning alias",
     "an alias name with a character it may not hold"},
    {"illegal character found while scanning anchor",
     "an anchor name with a character it may not hold"},
    {"cannot assign multiple anchors", "two anchors on one value"},
    {"cannot assign multiple tags", "two tags on one value"},
    {"cannot assign multiple aliases", "two aliases on one value"},
    {"aliases can't have any content", "an alias with a tag or content of its own"},
    {"end of verbatim tag not found", "a '!<' tag that is not closed with '>'"},
    {"illegal character found while scanning tag handle",
     "a tag handle with a character it may not hold"},
    {"tag handle with no suffix", "a tag with nothing after its handle"},
    {"illegal tab when looking for indentation", "a tab in indentation (YAML indents with spaces)"},
    {"cannot set zero indentation for a block scalar", "a block scalar indented by 0"},
    {"unexpected character in block scalar",
     "a block scalar's header with a character it may not hold"},
    {"YAML ", "a %YAML directive this reader cannot take"},  // the version, its arguments
    {"bad YAML version", "a %YAML directive this reader cannot take"},
    {"TAG directive", "a %TAG directive this reader cannot take"},
};

}  // namespace

std::string yaml_problem(std::string_view message, std::string_view text, int pos) {
  // a token no rule takes (yaml-cpp 0.7: "unknown token"; 0.9 names a flow indicator's case)
  if (message.rfind("unknown token", 0) == 0 ||
      message.rfind("plain value cannot start with flow indicator", 0) == 0) {
    const auto at = static_cast<std::size_t>(pos < 0 ? 0 : pos);
    return "unexpected '" + printable(at < text.size() ? text.substr(at, 1) : std::string_view()) +
           "'";
  }
  if (message.rfind("repeated ", 0) == 0) return "a directive given twice";
  for (const auto& [start, words] : kProblems) {
    if (message.rfind(start, 0) != 0) continue;
    std::string out(words);
    if (words.size() >= 2 && words.substr(words.size() - 2) == ": ")
      out += printable(message.substr(start.size()), 40);
    else if (!words.empty() && words.back() == '\\')
      out += printable(message.substr(start.size()), 8);
    return out;
  }
  return "it cannot be parsed here";
}

}  // namespace vin::diagnostics
