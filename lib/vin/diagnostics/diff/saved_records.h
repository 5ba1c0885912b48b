// Record sets from what inspect-model, inspect-config and profile wrote (jsonl, or the
// `--format json` document: saved records read a piece at a time, each line scanned, its values'
// texts kept in flat lists), and from records in memory.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "vin/diagnostics/container/input_file.h"
#include "vin/diagnostics/json/diff_records.h"
#include "vin/diagnostics/records/config_records.h"
#include "vin/diagnostics/records/model_metadata.h"

namespace vin::diagnostics {

/// A record set from records in memory (with the details `model` holds).
RecordSet record_set(const ModelMetadata& model, const std::string& source);
/// A configuration's record set; `unwalked` as RecordSet::unwalked.
RecordSet record_set(
    const ModelStructureSpec& spec, const std::string& source,
    std::optional<std::vector<std::pair<std::vector<std::string>, Json>>> unwalked = {});

/// Reads a file that inspect-model, inspect-config or profile wrote: jsonl, or the `--format
/// json` document. Throws Error naming the file (and line) when it is not one.
RecordSet read_record_file(const std::string& path);
/// The same for a file opened already.
RecordSet read_record_file(const InputFile& file);

}  // namespace vin::diagnostics
