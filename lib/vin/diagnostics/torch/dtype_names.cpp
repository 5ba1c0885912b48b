#include "vin/diagnostics/torch/dtype_names.h"

#include <algorithm>
#include <cctype>

namespace vin::diagnostics {
namespace {

// the table's scalar_type values are c10::ScalarType's: a LibTorch that renumbered them fails
// to build here rather than naming dtypes wrongly
constexpr int value(c10::ScalarType type) { return static_cast<int>(type); }
static_assert(value(c10::ScalarType::Byte) == 0 && value(c10::ScalarType::Char) == 1 &&
              value(c10::ScalarType::Short) == 2 && value(c10::ScalarType::Int) == 3 &&
              value(c10::ScalarType::Long) == 4 && value(c10::ScalarType::Half) == 5 &&
              value(c10::ScalarType::Float) == 6 && value(c10::ScalarType::Double) == 7 &&
              value(c10::ScalarType::ComplexHalf) == 8 &&
              value(c10::ScalarType::ComplexFloat) == 9 &&
              value(c10::ScalarType::ComplexDouble) == 10 && value(c10::ScalarType::Bool) == 11 &&
              value(c10::ScalarType::QInt8) == 12 && value(c10::ScalarType::QUInt8) == 13 &&
              value(c10::ScalarType::QInt32) == 14 && value(c10::ScalarType::BFloat16) == 15 &&
              value(c10::ScalarType::QUInt4x2) == 16 && value(c10::ScalarType::QUInt2x4) == 17,
              "c10::ScalarType's values differ from text/dtypes.cpp's table");

}  // namespace

const Dtype* dtype_of(c10::ScalarType type) {
  for (const Dtype& d : dtypes())
    if (d.scalar_type == value(type)) return &d;
  return nullptr;
}

std::optional<c10::ScalarType> scalar_type_of(const Dtype& dtype) {
  if (dtype.scalar_type < 0) return std::nullopt;
  return static_cast<c10::ScalarType>(dtype.scalar_type);
}

std::string python_dtype_name(c10::ScalarType type) {
  if (const Dtype* d = dtype_of(type)) return d->python_name();
  // a type newer than the table (LibTorch 2's uint16, float8_e5m2, ...): LibTorch's own name,
  // lower-cased, is Python's
  std::string name = c10::toString(type);
  std::transform(name.begin(), name.end(), name.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return "torch." + name;
}

const char* npy_descr(c10::ScalarType type) {
  const Dtype* d = dtype_of(type);
  // the table's descrs are string literals: data() is null-terminated
  return d && !d->npy_descr.empty() ? d->npy_descr.data() : nullptr;
}

}  // namespace vin::diagnostics
