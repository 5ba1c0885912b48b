#include "vin/diagnostics/text/shape_spec.h"

#include <algorithm>

#include "vin/diagnostics/records/error.h"
#include "vin/diagnostics/text/dtypes.h"

namespace vin::diagnostics {

ShapeSpec parse_shape_spec(const std::string& text) {
  const auto bad = [&](const std::string& why) {
    return UsageError("--shape " + text + ": " + why +
                      " (NAME=D1xD2x...[:DTYPE], e.g. x=1x3x224x224 or ids=2x16:int64)");
  };
  const std::size_t equals = text.find('=');
  if (equals == std::string::npos || equals == 0) throw bad("no argument name");
  ShapeSpec spec;
  spec.name = text.substr(0, equals);
  std::string dims = text.substr(equals + 1);
  if (const std::size_t colon = dims.find(':'); colon != std::string::npos) {
    spec.dtype = dims.substr(colon + 1);
    dims.resize(colon);
    const Dtype* dtype = dtype_named(spec.dtype);
    if (!dtype || !dtype->shape_dtype)
      throw bad("unknown dtype '" + spec.dtype + "'; one of " + shape_dtype_names());
  }
  std::size_t start = 0;
  while (!dims.empty() && start <= dims.size()) {
    const std::size_t x = std::min(dims.find('x', start), dims.size());
    const std::string d = dims.substr(start, x - start);
    if (d.empty() || d.size() > 12 || d.find_first_not_of("0123456789") != std::string::npos)
      throw bad("dimension '" + d + "' is not a non-negative integer");
    spec.shape.push_back(std::stoll(d));
    start = x + 1;
  }
  return spec;
}

}  // namespace vin::diagnostics
