#include "vin/diagnostics/records/diff_records.h"

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

}  // namespace vin::diagnostics
