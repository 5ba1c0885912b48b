// `vin-inspect diff`: the differences between two record sets of one kind (a model's
// inspect-model records with whatever details they hold, or a configuration's inspect-config
// records), matched by path, and the record sets from records in memory or from a file the tool
// wrote (jsonl or a json document). output_format writes them.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "vin/diagnostics/archive/input_file.h"
#include "vin/diagnostics/diff/diff_gate.h"
#include "vin/diagnostics/records/config_records.h"
#include "vin/diagnostics/records/diff_records.h"
#include "vin/diagnostics/records/model_metadata.h"

namespace vin::diagnostics {

/// A record set from records in memory (with the details `model` holds).
RecordSet record_set(const ModelMetadata& model, const std::string& source);
/// A configuration's record set; `unwalked` as RecordSet::unwalked.
RecordSet record_set(
    const ModelStructureSpec& spec, const std::string& source,
    std::optional<std::vector<std::pair<std::vector<std::string>, Json>>> unwalked = {});

/// Reads a file that inspect-model or inspect-config wrote: jsonl, or the `--format json`
/// document. Throws Error naming the file (and line) when it is not one.
RecordSet read_record_file(const std::string& path);
/// The same for a file opened already.
RecordSet read_record_file(const InputFile& file);

/// The differences between two record sets, and what was compared.
struct RecordDiff {
  std::vector<Change> changes;
  /// the kinds compared, from "model", "modules", "tensors", "attributes", "signatures",
  /// "config", "fields": details only one side holds are not compared
  std::vector<std::string> compared;
};

/// The differences from `old_set` to `new_set`, in this order: the container's fields; the old
/// items (removed, or changed field by field) in old order, then added items in new order; for
/// a configuration the values inside unwalked fields; for a model its modules' attributes, its
/// tensors, then its method signatures, each in the same old-then-added order. `gate` says which
/// fields are compared (--ignore, --only: `attributes` stands for every attribute, `value` for
/// the values inside unwalked configuration fields) and marks the changes within a
/// --tolerance. Throws UsageError for sets of different kinds, for a field the options name that
/// no record here has (naming the closest ones), and for a --tolerance on a field that is not
/// a number.
RecordDiff diff_records(const RecordSet& old_set, const RecordSet& new_set, const DiffGate& gate);

}  // namespace vin::diagnostics
