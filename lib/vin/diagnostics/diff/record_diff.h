// `vin-inspect diff`: the differences between two record sets of one kind (a model's
// inspect-model records with whatever details they hold, a configuration's inspect-config
// records, or profiles), matched by path (record_matching.h). The record sets come from
// saved_records.h; output_format writes the differences.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "vin/diagnostics/diff/diff_gate.h"
#include "vin/diagnostics/diff/saved_records.h"
#include "vin/diagnostics/records/config_records.h"
#include "vin/diagnostics/json/diff_records.h"
#include "vin/diagnostics/records/model_metadata.h"

namespace vin::diagnostics {

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
