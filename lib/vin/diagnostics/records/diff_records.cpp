#include "vin/diagnostics/records/diff_records.h"

namespace vin::diagnostics {

const char* to_string(RecordSet::Kind kind) {
  return kind == RecordSet::Kind::model ? "model" : "config";
}

}  // namespace vin::diagnostics
