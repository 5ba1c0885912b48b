#include "vin/diagnostics/records/config_records.h"

#include <cmath>

namespace vin::diagnostics {

// NaN values compare equal, so that a record equals its own copy.
bool operator==(const ConfigFieldSpec& a, const ConfigFieldSpec& b) {
  if (a.value_.index() != b.value_.index()) return false;
  if (const double* x = std::get_if<double>(&a.value_)) {
    const double y = std::get<double>(b.value_);
    if (!((std::isnan(*x) && std::isnan(y)) || *x == y)) return false;
  } else if (a.value_ != b.value_) {
    return false;
  }
  return a.path_ == b.path_ && a.declared_type_ == b.declared_type_ &&
         a.configured_type_ == b.configured_type_;
}

}  // namespace vin::diagnostics
