#include "vin/diagnostics/json/diff_records.h"

namespace vin::diagnostics {

const char* to_string(RecordSet::Kind kind) {
  switch (kind) {
    case RecordSet::Kind::model:
      return "model";
    case RecordSet::Kind::config:
      return "config";
    case RecordSet::Kind::profile:
      return "profile";
  }
  return "model";
}

DiffSummary summarize(const RecordSet& old_set, const RecordSet& new_set,
                      const std::vector<Change>& changes,
                      const std::vector<std::string>& compared) {
  DiffSummary summary;
  summary.kind = to_string(old_set.kind);
  summary.old_source = old_set.source;
  summary.new_source = new_set.source;
  for (const auto& c : changes) {
    if (c.kind == "environment") {
      ++summary.environment;
      continue;
    }
    ++(c.kind == "added" ? summary.added : c.kind == "removed" ? summary.removed : summary.changed);
    if (!c.counts()) ++summary.within_tolerance;
  }
  summary.identical = changes.empty();
  summary.compared = compared;
  return summary;
}

}  // namespace vin::diagnostics
