// The JSON value type the records use for what has no fixed shape (module attributes, argument
// defaults) and the encoders build: nlohmann's, with keys kept in insertion order. Also the two
// spellings every reader of such values shares (docs/records.md): a float, with non-finite values
// as strings, and a type marker for a value that is not a JSON scalar or array.
#pragma once

#include <cmath>
#include <nlohmann/json.hpp>
#include <string>

namespace vin::diagnostics {

using Json = nlohmann::ordered_json;

/// A float as the records write it: a JSON number, or "NaN", "Infinity", "-Infinity".
inline Json json_float(double value) {
  if (std::isnan(value)) return "NaN";
  if (std::isinf(value)) return value > 0 ? "Infinity" : "-Infinity";
  return value;
}

/// `{"type_marker": "qualified.Type"}`: a value the records describe by its type only.
inline Json type_marker(const std::string& qualified_type) {
  return Json::object({{"type_marker", qualified_type}});
}

}  // namespace vin::diagnostics
