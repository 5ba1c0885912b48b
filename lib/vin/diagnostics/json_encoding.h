// JSON encoding of the records (contract section 2): field names are the seed's attribute names,
// key order is the seed's field order. `jsonl` lines carry a leading "record" key and are printed
// with Python's json.dumps separators, so the output is byte-for-byte what a Python peer prints.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "vin/diagnostics/model_metadata.h"

namespace vin::diagnostics {

using Json = nlohmann::ordered_json;

/// One ModuleMetadata as a JSON object, without the "record" key.
Json to_json(const ModuleMetadata& module);

/// ModelMetadata as the `json` document: its fields and "modules" with every module inside.
Json to_json(const ModelMetadata& model);

/// `value` with "record": `record_name` as its first key (a `jsonl` line's object).
Json with_record_key(const char* record_name, const Json& value);

/// One line of JSON as Python's json.dumps writes it: ", " and ": " separators, non-ASCII
/// escaped as \uXXXX, invalid UTF-8 replaced by U+FFFD. No trailing newline.
std::string dump_line(const Json& value);

/// An indented document (two spaces) with the same escaping rules. No trailing newline.
std::string dump_pretty(const Json& value);

}  // namespace vin::diagnostics
