#include "vin/diagnostics/output/diff_markdown.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "vin/diagnostics/json/exact_integer.h"
#include "vin/diagnostics/json/json_encoding.h"
#include "vin/diagnostics/text/utf8.h"

namespace vin::diagnostics {
namespace {

// `text` for HTML: & < > " escaped
std::string html_escaped(const std::string& text) {
  std::string out;
  for (const char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

void append_code_point(std::string& out, unsigned code) {
  char text[8];
  std::snprintf(text, sizeof text, "\\u%04x", code);
  out += text;
}

// Text from the records as a code span shows it, on one line and whole in a table cell: `|`
// as `\|`, a backslash as `\\`, newline, CR and tab as `\n`, `\r`, `\t`, other control
// characters (C0, DEL, C1) and the line and paragraph separators U+2028/U+2029 as `\uXXXX`, a
// byte that is not UTF-8 as `\udcXX` (as the records write it); other text as it is.
std::string escaped_text(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size();) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c >= 0x80) {
      const std::size_t length = utf8_sequence_length(text, i);
      if (length == 0) {
        append_code_point(out, 0xDC00 + c);
        ++i;
        continue;
      }
      const char32_t code = utf8_code_point(text, i, length);
      if (code <= 0x9F || code == 0x2028 || code == 0x2029)
        append_code_point(out, static_cast<unsigned>(code));
      else
        out.append(text.substr(i, length));
      i += length;
      continue;
    }
    if (c == '\\')
      out += "\\\\";
    else if (c == '|')
      out += "\\|";
    else if (c == '\n')
      out += "\\n";
    else if (c == '\r')
      out += "\\r";
    else if (c == '\t')
      out += "\\t";
    else if (c < 0x20 || c == 0x7F)
      append_code_point(out, c);
    else
      out += static_cast<char>(c);
    ++i;
  }
  return out;
}

// A value's JSON text (dump_line: ASCII, every control character already an escape) as a code
// span shows it: JSON's escapes are the ones escaped_text writes (`\n`, `\\`, `\uXXXX`), so
// they stay as they are, a newline in a value showing as `\n` as it does in a name; only `|`
// is escaped, `\b` and `\f` written as the `\uXXXX` of the rest, and DEL, which JSON leaves
// bare, as `\u007f`.
std::string escaped_json(std::string_view json) {
  std::string out;
  out.reserve(json.size());
  for (std::size_t i = 0; i < json.size(); ++i) {
    const auto c = static_cast<unsigned char>(json[i]);
    if (c == '\\' && i + 1 < json.size()) {
      const char escape = json[++i];
      if (escape == 'b' || escape == 'f') {
        append_code_point(out, escape == 'b' ? 0x08 : 0x0C);
      } else {
        out += '\\';
        out += escape;
      }
    } else if (c == '|') {
      out += "\\|";
    } else if (c < 0x20 || c == 0x7F) {
      append_code_point(out, c);
    } else {
      out += static_cast<char>(c);
    }
  }
  return out;
}

// `escaped` in a code span: fenced by more backticks than any run inside it
std::string fenced(const std::string& escaped) {
  std::size_t longest = 0, run = 0;
  for (const char c : escaped) {
    run = c == '`' ? run + 1 : 0;
    longest = std::max(longest, run);
  }
  const std::string fence(longest + 1, '`');
  // a span that starts or ends with a backtick (or is all spaces) keeps a space each side, which
  // CommonMark strips
  const bool pad = !escaped.empty() && (escaped.front() == '`' || escaped.back() == '`' ||
                                        escaped.find_first_not_of(' ') == std::string::npos);
  return fence + (pad ? " " : "") + escaped + (pad ? " " : "") + fence;
}

// The change from `old_value` to `new_value` and its percent of the old value, for numbers:
// exact for integers of any size; empty where either is not a number, the percent also where
// the old value is 0 (never inf or nan).
std::pair<std::string, std::string> change_and_percent(const Json& old_value,
                                                       const Json& new_value) {
  const auto a = ExactInteger::of(old_value), b = ExactInteger::of(new_value);
  const auto percent_of = [](long double change, long double base) -> std::string {
    if (base == 0 || !std::isfinite(static_cast<double>(change / base))) return "";
    char text[64];
    std::snprintf(text, sizeof text, "%+.2Lf%%", change / std::fabs(base) * 100);
    return text;
  };
  if (a && b) {
    const ExactInteger change = *b - *a;
    const std::string digits = change.decimal();
    return {(change.negative() || change.is_zero() ? "" : "+") + digits,
            percent_of(std::stold(digits), std::stold(a->decimal()))};
  }
  const bool numbers = (old_value.is_number() && !old_value.is_boolean()) &&
                       (new_value.is_number() && !new_value.is_boolean());
  if (!numbers) return {"", ""};
  const long double x = old_value.get<double>(), y = new_value.get<double>();
  if (!std::isfinite(static_cast<double>(x)) || !std::isfinite(static_cast<double>(y)))
    return {"", ""};
  char text[64];
  std::snprintf(text, sizeof text, "%+.6Lg", y - x);
  return {text, percent_of(y - x, x)};
}

std::string row(const Change& c) {
  const auto [change, percent] = change_and_percent(c.old_value, c.new_value);
  // a path or field name as its text (a config field's path as JSON); a value as JSON (so "5"
  // and 5 stay apart)
  const auto name = [](const Json& value) {
    if (value.is_null()) return std::string();
    return value.is_string() ? markdown_code(value.get<std::string>())
                             : markdown_json_code(dump_line(value));
  };
  const auto cell = [](const Json& value) {
    return value.is_null() ? std::string() : markdown_json_code(dump_line(value));
  };
  const std::string gate = !c.within_tolerance ? "" : *c.within_tolerance ? "✓ within" : "✗ beyond";
  return "| " + c.kind + " | " + markdown_code(c.subject) + " | " + name(c.path) + " | " +
         name(c.field) + " | " + cell(c.old_value) + " | " + cell(c.new_value) + " | " + change +
         " | " + percent + " | " + gate + " |\n";
}

}  // namespace

std::string markdown_code(const std::string& text) {
  return fenced(escaped_text(text));
}

std::string markdown_json_code(const std::string& json) {
  return fenced(escaped_json(json));
}

std::string format_diff_markdown(const RecordSet& old_set, const RecordSet& new_set,
                                 const std::vector<Change>& changes,
                                 const std::vector<std::string>& compared) {
  const DiffSummary s = summarize(old_set, new_set, changes, compared);
  std::string kinds;
  for (const auto& k : compared) kinds += (kinds.empty() ? "" : ", ") + k;
  std::string out = "**vin-inspect diff** " + markdown_code(s.old_source) + " → " +
                    markdown_code(s.new_source) + ": ";
  const std::int64_t total = s.added + s.removed + s.changed;
  const std::int64_t beyond = total - s.within_tolerance;  // what makes the exit status 1
  if (s.identical)
    out += "identical";
  else
    out += std::to_string(total) + (total == 1 ? " change" : " changes") + " (" +
           std::to_string(s.added) + " added, " + std::to_string(s.removed) + " removed, " +
           std::to_string(s.changed) + " changed), " + std::to_string(s.within_tolerance) +
           " within tolerance, " + std::to_string(beyond) + " beyond";
  if (s.environment)
    out += "; " + std::to_string(s.environment) + " environment (measured otherwise)";
  out += "; compared " + markdown_code(kinds) + "; exit status " + (beyond ? "1" : "0") + "\n";
  if (changes.empty()) return out;

  const bool fold = changes.size() > kMarkdownFoldAfter;
  std::string table =
      "| kind | subject | path | field | old | new | change | percent | tolerance |\n"
      "| --- | --- | --- | --- | --- | --- | --- | --- | --- |\n";
  const std::string open = fold ? "\n<details><summary>" +
                                      html_escaped(std::to_string(changes.size())) +
                                      " changes</summary>\n\n"
                                : "\n";
  const std::string close = fold ? "\n</details>\n" : "";
  // room for what follows the table: the fold's end and the line saying what was left out
  const std::size_t reserve = close.size() + 200;
  std::size_t shown = 0;
  for (const Change& c : changes) {
    std::string line = row(c);
    if (out.size() + open.size() + table.size() + line.size() + reserve > kMarkdownMaxBytes) break;
    table += line;
    ++shown;
  }
  out += open + table + close;
  if (shown < changes.size())
    out += "\n" + std::to_string(changes.size() - shown) + " of " + std::to_string(changes.size()) +
           " changes left out (the output stays under 1,000,000 bytes); `--format jsonl` has "
           "them all.\n";
  return out;
}

}  // namespace vin::diagnostics
