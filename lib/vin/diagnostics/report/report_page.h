// What a report page shows (contract 13), as the one JSON block the page embeds: the module tree
// of one or two sides (profile records, or inspect-model records for the parameters view), each
// node's value of each metric on each side and its uncovered "(self)" part, in a comparison each
// node's change class with `--tolerance` as diff reads it, the counts of those, the environment
// fields that differ, the operators and the headers. The page's script draws it and computes
// nothing that the records decide.
#pragma once

#include <string>
#include <vector>

#include "vin/diagnostics/diff/diff_gate.h"
#include "vin/diagnostics/json/diff_records.h"

namespace vin::diagnostics {

/// A metric the page can size boxes by, declared once: its name (--metric, the fragment), the
/// label the page writes ("N modules match, X% of LABEL"), the record field it comes from
/// (what --tolerance names) and its unit.
struct ReportMetric {
  const char* name;
  const char* label;
  const char* field;
  const char* unit;  ///< "" (a count), "ms", "bytes"
};

/// Every metric, in the order the page's switch shows them: flops, time, parameters, memory.
const std::vector<ReportMetric>& report_metrics();
/// "flops|time|parameters|memory": what --metric takes.
std::string report_metric_names();

struct ReportOptions {
  std::string metric;  ///< the view opened first; "" for the default (flops; parameters for
                       ///< model records)
  std::string title;   ///< "" for the NEW side's file name
  DiffGate gate;       ///< --tolerance's limits, by the metrics' fields
};

/// The page's data for `sides` (one: the single view; two: OLD and NEW, the comparison). Each
/// side is profile records or inspect-model records. Throws Error naming the file for a side of
/// other records (exit 1); UsageError for a profile side against a model side (naming both), a
/// metric the sides do not have (model records: parameters only) and a --tolerance field that
/// no metric comes from.
Json report_data(const std::vector<const RecordSet*>& sides, const ReportOptions& options);

}  // namespace vin::diagnostics
