// The JSON value type the records use for what has no fixed shape (module attributes, argument
// defaults) and the encoders build: nlohmann's, with keys kept in insertion order. Also the two
// spellings every reader of such values shares (docs/records.md): a float, with non-finite values
// as strings, and a type marker for a value that is not a JSON scalar or array.
#pragma once

#include <cmath>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>

namespace vin::diagnostics {

using Json = nlohmann::ordered_json;

/// A float as the records write it: a JSON number, or "NaN", "Infinity", "-Infinity".
inline Json json_float(double value) {
  if (std::isnan(value)) return "NaN";
  if (std::isinf(value)) return value > 0 ? "Infinity" : "-Infinity";
  return value;
}

/// An integer beyond 64 bits, read from JSON records or a YAML rendering, held as its decimal
/// digits in a value of its own kind (a binary value of subtype kBigIntegerSubtype): printed as
/// the JSON number it is, and never equal to the string of the same digits (contract 9.4).
inline constexpr std::uint8_t kBigIntegerSubtype = 0x69;
inline Json big_integer_json(const std::string& digits) {
  return Json::binary(Json::binary_t::container_type(digits.begin(), digits.end()),
                      kBigIntegerSubtype);
}
inline bool is_big_integer(const Json& value) {
  return value.is_binary() && value.get_binary().has_subtype() &&
         value.get_binary().subtype() == kBigIntegerSubtype;
}
/// The digits of a big_integer_json value.
inline std::string big_integer_digits(const Json& value) {
  const auto& bytes = value.get_binary();
  return std::string(bytes.begin(), bytes.end());
}

/// The members of a JSON object by key, found in constant time: ordered_json finds a key by
/// scanning its members, so a lookup per member of an object of n keys costs n^2/2 comparisons
/// (300,000 attributes: minutes). Borrows the object, which must outlive it.
class JsonKeyIndex {
 public:
  explicit JsonKeyIndex(const Json& object) {
    if (!object.is_object()) return;
    const auto& members = object.get_ref<const Json::object_t&>();
    members_.reserve(members.size());
    for (const auto& member : members) members_.emplace(member.first, &member.second);
  }
  /// The member `key`, or nullptr.
  const Json* find(std::string_view key) const {
    const auto it = members_.find(key);
    return it == members_.end() ? nullptr : it->second;
  }

 private:
  std::unordered_map<std::string_view, const Json*> members_;
};

/// A JSON object built key by key in linear time (see JsonKeyIndex); a repeated key replaces
/// the value where the key first was, as `object[key] = value` does.
class JsonObjectBuilder {
 public:
  void set(const std::string& key, Json value) {
    // ordered_json's members as the vector they are (its operator[] takes keys)
    auto& members = static_cast<Json::object_t::Container&>(object_.get_ref<Json::object_t&>());
    const auto [it, added] = index_.emplace(key, members.size());
    if (added)
      members.emplace_back(key, std::move(value));  // no search for the key
    else
      members[it->second].second = std::move(value);
  }
  Json take() { return std::move(object_); }

 private:
  Json object_ = Json::object();
  std::unordered_map<std::string, std::size_t> index_;
};

/// Whether two values print the same JSON (records/json_encoding): 1 and 1.0 differ, NaN equals
/// NaN, strings differing only in bytes that are not UTF-8 differ.
bool same_json(const Json& a, const Json& b);

/// `{"type_marker": "qualified.Type"}`: a value the records describe by its type only.
inline Json type_marker(const std::string& qualified_type) {
  return Json::object({{"type_marker", qualified_type}});
}

}  // namespace vin::diagnostics
