// `vin-inspect diff`: the differences between two record sets of one kind (a model's
// inspect-model records, or a configuration's inspect-config records), matched by path, and the
// record sets from records in memory or from a saved jsonl file. output_format writes them.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "vin/diagnostics/records/config_records.h"
#include "vin/diagnostics/records/diff_records.h"
#include "vin/diagnostics/records/model_metadata.h"

namespace vin::diagnostics {

/// A record set from records in memory.
RecordSet record_set(const ModelMetadata& model, const std::string& source);
RecordSet record_set(const ModelStructureSpec& spec, const std::string& source);

/// Reads a jsonl file that inspect-model or inspect-config wrote. Throws Error naming the file
/// and line when it is not one.
RecordSet read_record_file(const std::string& path);

/// True when `path` holds jsonl records (its first non-blank byte is '{').
bool looks_like_record_file(const std::string& path);

/// The differences from `old_set` to `new_set`: the container's fields first, then items of the
/// old set (removed, or changed field by field) in old order, then added items in new order.
/// Fields named in `ignore` are not compared. Throws UsageError for sets of different kinds.
std::vector<Change> diff_records(const RecordSet& old_set, const RecordSet& new_set,
                                 const std::vector<std::string>& ignore);

}  // namespace vin::diagnostics
