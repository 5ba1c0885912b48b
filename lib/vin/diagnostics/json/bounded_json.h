// The one JSON parser for what the tool reads (saved records, PyTorch 1.0-1.2's model.json):
// bounded in depth while it parses, so that no file can nest values deep enough to exhaust the
// stack of what later copies, compares or prints them.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <type_traits>

#include "vin/diagnostics/records/record_value.h"

namespace vin::diagnostics {

/// A JSON value nested more deeply than the reader allows.
struct JsonTooDeep {};

/// Parses `text` as one JSON value, as Json::parse does, except: a value inside more than
/// `max_depth` arrays and objects throws JsonTooDeep as soon as the parser reaches it; an
/// object's repeated key keeps its first place (the last value wins, as Json::parse); integers
/// beyond 64 bits are kept as their digits (big_integer_json: never equal to a string). Invalid
/// JSON throws nlohmann's parse_error.
Json parse_bounded_json(const std::string& text, std::size_t max_depth);

/// What scan_json_object made of a text.
enum class JsonScan {
  object,      ///< a JSON object: its members were handed out
  not_object,  ///< JSON, but not an object (nothing handed out)
  too_deep,    ///< parse_bounded_json would throw JsonTooDeep
  not_json,    ///< parse_bounded_json would throw a parse error
};

/// Reads `text` as parse_bounded_json does, accepting exactly the texts it accepts (the same
/// depth bound met at the same place), but builds nothing: for a JSON object it calls
/// `member(key, value)` for each of its members in order, `key` the member name's JSON string
/// as written (quotes and escapes included) and `value` the member value's JSON text. A saved
/// record line is read this way (diff at scale: no DOM, one pass over the bytes); a value is
/// parsed only where it is needed. `member` may be called before the scan finds the text is
/// not JSON. Members of a repeated key are all handed out.
template <class Member>
JsonScan scan_json_object(std::string_view text, std::size_t max_depth, Member&& member) {
  return scan_json_object(text, max_depth, &member,
                          [](void* context, std::string_view key, std::string_view value) {
                            (*static_cast<std::remove_reference_t<Member>*>(context))(key, value);
                          });
}
JsonScan scan_json_object(std::string_view text, std::size_t max_depth, void* context,
                          void (*member)(void*, std::string_view, std::string_view));

/// The string a JSON string's text (as scan_json_object hands out: quotes included) stands for,
/// as parse_bounded_json reads it (surrogateescape's lone surrogates back as their bytes).
std::string json_string_value(std::string_view quoted);

/// Whether `text`, JSON text scan_json_object accepted, is a string that dump_line writes as it
/// is: printable ASCII without escapes. Such a text is its own canonical form.
bool is_plain_json_string(std::string_view text);

}  // namespace vin::diagnostics
