// Lets doctest print records in failure messages (as their jsonl line).
#pragma once

#include <ostream>

#include "vin/diagnostics/json/json_encoding.h"
#include "vin/diagnostics/records/model_metadata.h"

namespace vin::diagnostics {

inline std::ostream& operator<<(std::ostream& out, const ModuleMetadata& m) {
  return out << dump_line(to_json(m));
}

inline std::ostream& operator<<(std::ostream& out, const ModelMetadata& m) {
  return out << dump_line(to_json(m));
}

}  // namespace vin::diagnostics
