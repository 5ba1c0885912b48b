// Whether scan_json_object reads a text as parse_bounded_json does: the same texts accepted, the
// same depth refusals, and for an object members whose texts parse to the members' values
// (a repeated key's last value). Shared by the records fuzzer and bounded_json_test.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "vin/diagnostics/json/bounded_json.h"
#include "vin/diagnostics/json/json_encoding.h"

namespace vin::test {

/// What differs between the scanner and the parser on `text`, or nothing.
inline std::optional<std::string> json_scan_disagreement(const std::string& text,
                                                         std::size_t max_depth = 64) {
  using namespace vin::diagnostics;
  enum class Parsed { object, not_object, too_deep, not_json };
  Parsed parsed = Parsed::not_json;
  Json dom;
  try {
    dom = parse_bounded_json(text, max_depth);
    parsed = dom.is_object() ? Parsed::object : Parsed::not_object;
  } catch (const JsonTooDeep&) {
    parsed = Parsed::too_deep;
  } catch (const Json::exception&) {
    parsed = Parsed::not_json;
  }
  std::vector<std::pair<std::string_view, std::string_view>> members;
  const JsonScan scan = scan_json_object(text, max_depth, [&](std::string_view k, std::string_view v) {
    members.emplace_back(k, v);
  });
  const int expected = static_cast<int>(parsed);
  if (static_cast<int>(scan) != expected)
    return "scan says " + std::to_string(static_cast<int>(scan)) + ", the parser " +
           std::to_string(expected);
  if (scan != JsonScan::object) return std::nullopt;
  // the members, each key's last value, in the order of each key's first place; not where the
  // text holds a character of U+10FF80-U+10FFFF, which the parser's surrogateescape mapping
  // (bounded_json.cpp) turns into a byte across the whole text once it meets any \udcXX
  if (text.find("\xF4\x8F\xBE") != std::string::npos ||
      text.find("\xF4\x8F\xBF") != std::string::npos)
    return std::nullopt;
  JsonObjectBuilder builder;
  for (const auto& [key, value] : members)
    builder.set(json_string_value(key), parse_bounded_json(std::string(value), max_depth));
  const Json rebuilt = builder.take();
  if (dump_line(rebuilt) != dump_line(dom))
    return "members " + dump_line(rebuilt) + ", the parser's object " + dump_line(dom);
  for (const auto& [key, value] : members)
    if (is_plain_json_string(value) && dump_line(Json(json_string_value(value))) != value)
      return "a plain string that is not its own canonical text: " + std::string(value);
  return std::nullopt;
}

}  // namespace vin::test
