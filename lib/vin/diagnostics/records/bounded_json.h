// The one JSON parser for what the tool reads (saved records, PyTorch 1.0-1.2's model.json):
// bounded in depth while it parses, so that no file can nest values deep enough to exhaust the
// stack of what later copies, compares or prints them.
#pragma once

#include <cstddef>
#include <string>

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

}  // namespace vin::diagnostics
