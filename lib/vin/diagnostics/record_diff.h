// `vin-inspect diff`: the differences between two record sets of one kind (a model's
// inspect-model records, or a configuration's inspect-config records), matched by path.
// Works on the records' JSON form, so records from an archive, a rendering, or a saved jsonl
// file compare alike. Nothing here depends on LibTorch.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "vin/diagnostics/config_records.h"
#include "vin/diagnostics/json_encoding.h"
#include "vin/diagnostics/model_metadata.h"
#include "vin/diagnostics/output_format.h"

namespace vin::diagnostics {

/// One side of a diff: the container record's fields and its items keyed by path.
struct RecordSet {
  enum class Kind { model, config };
  Kind kind = Kind::model;
  std::string source;       ///< the file it came from, for messages
  Json header;              ///< ModelMetadata / ModelStructureSpec fields, without "record"
  std::vector<Json> items;  ///< ModuleMetadata / ConfigFieldSpec objects, without "record"
};

/// A record set from records in memory.
RecordSet record_set(const ModelMetadata& model, const std::string& source);
RecordSet record_set(const ModelStructureSpec& spec, const std::string& source);

/// Reads a jsonl file that inspect-model or inspect-config wrote. Throws Error naming the file
/// and line when it is not one.
RecordSet read_record_file(const std::string& path);

/// True when `path` holds jsonl records (its first non-blank byte is '{').
bool looks_like_record_file(const std::string& path);

/// One difference.
struct Change {
  std::string kind;     ///< "added", "removed", "changed"
  std::string subject;  ///< "module", "field", "model", "config"
  Json path;            ///< the module path (string) or field path (array); null for the model
  Json field;           ///< the changed field's name, or null for added/removed items
  Json old_value;       ///< null for added items; the whole record for removed ones
  Json new_value;       ///< null for removed items; the whole record for added ones
};

/// The differences from `old_set` to `new_set`: the container's fields first, then items of the
/// old set (removed, or changed field by field) in old order, then added items in new order.
/// Fields named in `ignore` are not compared. Throws UsageError for sets of different kinds.
std::vector<Change> diff_records(const RecordSet& old_set, const RecordSet& new_set,
                                 const std::vector<std::string>& ignore);

/// Writes the changes: one "Change" line each then a "DiffSummary" line (jsonl), one document
/// (json), or a readable summary with +, -, ~ marks (table).
void write_diff(std::ostream& out, const RecordSet& old_set, const RecordSet& new_set,
                const std::vector<Change>& changes, OutputFormat format);

}  // namespace vin::diagnostics
