// The records of `vin-inspect diff`: the two sides as record sets, and the changes between them.
// Plain values in the records' JSON form, so that records from an archive, a rendering or a saved
// jsonl file compare alike; computed by record_diff, written by output_format.
#pragma once

#include <string>
#include <vector>

#include "vin/diagnostics/records/json_encoding.h"

namespace vin::diagnostics {

/// One side of a diff: the container record's fields and its items keyed by path.
struct RecordSet {
  enum class Kind { model, config };
  Kind kind = Kind::model;
  std::string source;       ///< the file it came from, for messages
  Json header;              ///< ModelMetadata / ModelStructureSpec fields, without "record"
  std::vector<Json> items;  ///< ModuleMetadata / ConfigFieldSpec objects, without "record"
};

/// One difference.
struct Change {
  std::string kind;     ///< "added", "removed", "changed"
  std::string subject;  ///< "module", "field", "model", "config"
  Json path;            ///< the module path (string) or field path (array); null for the model
  Json field;           ///< the changed field's name, or null for added/removed items
  Json old_value;       ///< null for added items; the whole record for removed ones
  Json new_value;       ///< null for removed items; the whole record for added ones
};

/// "model" or "config".
const char* to_string(RecordSet::Kind kind);

}  // namespace vin::diagnostics
