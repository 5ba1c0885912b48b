#include "vin/diagnostics/torchscript/torchscript_literal.h"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <iterator>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "vin/diagnostics/torchscript/class_source.h"
#include "vin/diagnostics/pickle/pickle_reader.h"

namespace vin::diagnostics {
namespace {

constexpr int kMaxLiteralDepth = 32;  // printed constants nest a level or two

bool is_digit(char c) { return c >= '0' && c <= '9'; }

std::string_view trim(std::string_view text) {
  const std::size_t first = text.find_first_not_of(" \t\n");
  if (first == std::string_view::npos) return {};
  const std::size_t last = text.find_last_not_of(" \t\n");
  return text.substr(first, last - first + 1);
}

[[noreturn]] void unsupported(std::string_view what, std::string_view text) {
  throw UnsupportedPickle(std::string(what) + ": " + std::string(text.substr(0, 80)));
}

// Splits `text` at the commas outside brackets and string literals.
std::vector<std::string_view> split_top_level(std::string_view text) {
  std::vector<std::string_view> parts;
  int depth = 0;
  SourceScanner scanner;
  std::size_t start = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    switch (scanner.feed(text[i])) {
      case SourceScanner::Role::open:
        ++depth;
        break;
      case SourceScanner::Role::close:
        --depth;
        break;
      case SourceScanner::Role::other:
        if (text[i] == ',' && depth == 0) {
          parts.push_back(trim(text.substr(start, i - start)));
          start = i + 1;
        }
        break;
      case SourceScanner::Role::quoted:
        break;
    }
  }
  if (scanner.in_string() || depth != 0) unsupported("unbalanced literal", text);
  const std::string_view last = trim(text.substr(start));
  if (!last.empty()) parts.push_back(last);  // `(1,)` and `[1, 2, ]` end with a comma
  return parts;
}

// The position of the bracket that closes the one at `open`, or npos.
std::size_t closing_bracket(std::string_view text, std::size_t open) {
  int depth = 0;
  SourceScanner scanner;
  for (std::size_t i = open; i < text.size(); ++i) {
    const SourceScanner::Role role = scanner.feed(text[i]);
    if (role == SourceScanner::Role::open)
      ++depth;
    else if (role == SourceScanner::Role::close && --depth == 0)
      return i;
  }
  return std::string_view::npos;
}

Json parse_number(std::string_view text) {
  if (text == "inf") return json_float(std::numeric_limits<double>::infinity());
  if (text == "-inf") return json_float(-std::numeric_limits<double>::infinity());
  if (text == "nan" || text == "-nan") return json_float(std::numeric_limits<double>::quiet_NaN());
  const std::size_t digits_from = text[0] == '-' ? 1 : 0;
  if (digits_from == text.size() || !is_digit(text[digits_from]))
    unsupported("not a literal", text);
  const std::string s(text);
  char* end = nullptr;
  errno = 0;
  if (s.find_first_of(".eE") == std::string::npos) {
    const long long value = std::strtoll(s.c_str(), &end, 10);
    if (errno || end != s.c_str() + s.size()) unsupported("an integer out of range", text);
    return static_cast<std::int64_t>(value);
  }
  const double value = std::strtod(s.c_str(), &end);
  if (end != s.c_str() + s.size()) unsupported("not a number", text);
  return json_float(value);
}

Json parse_value(std::string_view text, const ArchiveConstant& constant, int depth) {
  text = trim(text);
  if (text.empty()) unsupported("an empty literal", text);
  if (depth > kMaxLiteralDepth) unsupported("a literal nested too deep", text);
  if (text == "None") return nullptr;
  if (text == "True") return true;
  if (text == "False") return false;
  const char first = text.front();
  if (first == '"' || first == '\'') return decode_string_literal(text);
  if (first == '(' || first == '[') {
    if (closing_bracket(text, 0) != text.size() - 1) unsupported("not one literal", text);
    Json items = Json::array();
    for (const std::string_view item : split_top_level(text.substr(1, text.size() - 2)))
      items.push_back(parse_value(item, constant, depth + 1));
    return items;
  }
  constexpr std::string_view kConstant = "CONSTANTS.c";
  if (text.substr(0, kConstant.size()) == kConstant) {
    const std::string_view index = text.substr(kConstant.size());
    if (index.empty() || index.size() > 9 ||
        index.find_first_not_of("0123456789") != std::string_view::npos)
      unsupported("not a constant reference", text);
    return constant(std::stoul(std::string(index)));
  }
  constexpr std::string_view kDevice = "torch.device(";
  if (text.substr(0, kDevice.size()) == kDevice && text.back() == ')')
    return type_marker("torch.device");
  return parse_number(text);
}

}  // namespace

Json parse_torchscript_literal(std::string_view text, const ArchiveConstant& constant) {
  return parse_value(text, constant, 0);
}

MethodSignature parse_method_signature(const MethodSource& method,
                                       const ArchiveConstant& constant) {
  const std::string_view text = method.signature;
  const std::size_t open = text.find('(');
  const std::size_t close = open == std::string_view::npos ? open : closing_bracket(text, open);
  if (close == std::string_view::npos) unsupported("an unreadable signature", text);
  const std::string_view tail = trim(text.substr(close + 1));
  if (tail.substr(0, 3) != "-> " || tail.back() != ':')
    unsupported("a signature without a return type", text);

  MethodSignature signature;
  signature.name = method.name;
  signature.returns = std::string(trim(tail.substr(3, tail.size() - 4)));
  const std::vector<std::string_view> arguments =
      split_top_level(text.substr(open + 1, close - open - 1));
  for (std::size_t i = 0; i < arguments.size(); ++i) {
    const std::string_view argument = arguments[i];
    const std::size_t colon = argument.find(':');
    if (colon == std::string_view::npos) unsupported("an argument without a type", argument);
    const std::string_view name = trim(argument.substr(0, colon));
    if (name.empty()) unsupported("an argument without a name", argument);
    for (const char c : name)
      if (!is_identifier_char(c)) unsupported("an argument this reader cannot name", argument);
    if (i == 0 && name == "self") continue;
    // the default follows the first `=` outside the type's brackets
    std::string_view rest = argument.substr(colon + 1);
    std::size_t equals = std::string_view::npos;
    int depth = 0;
    for (std::size_t j = 0; j < rest.size() && equals == std::string_view::npos; ++j) {
      const char c = rest[j];
      if (c == '[' || c == '(') ++depth;
      if (c == ']' || c == ')') --depth;
      if (c == '=' && depth == 0) equals = j;
    }
    ArgumentSignature out;
    out.name = std::string(name);
    out.type = std::string(trim(rest.substr(0, equals)));
    if (equals != std::string_view::npos) {
      out.has_default = true;
      out.default_value = parse_torchscript_literal(rest.substr(equals + 1), constant);
    }
    signature.arguments.push_back(std::move(out));
  }
  return signature;
}

std::string decode_string_literal(std::string_view literal) {
  if (literal.size() < 2 || (literal.front() != '"' && literal.front() != '\'') ||
      literal.back() != literal.front())
    unsupported("unterminated string", literal);
  const char quote = literal.front();
  std::string out;
  for (std::size_t i = 1; i + 1 < literal.size(); ++i) {
    char c = literal[i];
    if (c == quote) unsupported("a string literal that ends early", literal);
    if (c == '\\') {
      if (i + 2 >= literal.size()) unsupported("a string literal ending in a backslash", literal);
      c = literal[++i];
      if (c >= '0' && c <= '7') {
        // TorchScript prints every other control byte as three octal digits (`\000`, `\033`)
        unsigned value = 0;
        std::size_t digits = 0;
        for (; digits < 3 && i + 1 < literal.size() && literal[i] >= '0' && literal[i] <= '7';
             ++digits, ++i)
          value = value * 8 + static_cast<unsigned>(literal[i] - '0');
        --i;
        if (value > 0xff) unsupported("an octal escape past 0377", literal);
        out += static_cast<char>(value);
        continue;
      }
      static constexpr std::pair<char, char> kEscapes[] = {
          {'\\', '\\'}, {'\'', '\''}, {'"', '"'},  {'n', '\n'}, {'t', '\t'},
          {'r', '\r'},  {'a', '\a'},  {'b', '\b'}, {'f', '\f'}, {'v', '\v'}};
      const auto* known = std::find_if(std::begin(kEscapes), std::end(kEscapes),
                                       [c](const auto& escape) { return escape.first == c; });
      if (known == std::end(kEscapes)) unsupported("an escape this reader does not know", literal);
      c = known->second;
    }
    out += c;
  }
  return out;
}

}  // namespace vin::diagnostics
