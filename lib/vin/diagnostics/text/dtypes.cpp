#include "vin/diagnostics/text/dtypes.h"

#include <utility>

namespace vin::diagnostics {

const std::vector<Dtype>& dtypes() {
  // scalar_type: the value of c10::ScalarType (c10/core/ScalarType.h); LibTorch 2 added the
  // unsigned and float8 types after QUInt2x4 (17)
  static const std::vector<Dtype> table = {
      {"float32", "FloatStorage", 4, 6, "<f4", true},
      {"float16", "HalfStorage", 2, 5, "<f2", true},
      {"bfloat16", "BFloat16Storage", 2, 15, "", true},
      {"float64", "DoubleStorage", 8, 7, "<f8", true},
      {"int64", "LongStorage", 8, 4, "<i8", true},
      {"int32", "IntStorage", 4, 3, "<i4", true},
      {"int16", "ShortStorage", 2, 2, "<i2", true},
      {"int8", "CharStorage", 1, 1, "|i1", true},
      {"uint8", "ByteStorage", 1, 0, "|u1", true},
      {"bool", "BoolStorage", 1, 11, "|b1", true},
      {"complex32", "ComplexHalfStorage", 4, 8, "", false, false},
      {"complex64", "ComplexFloatStorage", 8, 9, "<c8", false},
      {"complex128", "ComplexDoubleStorage", 16, 10, "<c16", false},
      {"qint8", "QInt8Storage", 1, 12, "", false},
      {"quint8", "QUInt8Storage", 1, 13, "", false},
      {"qint32", "QInt32Storage", 4, 14, "", false},
      {"quint4x2", "QUInt4x2Storage", 1, 16, "", false, false},
      {"quint2x4", "QUInt2x4Storage", 1, 17, "", false, false},
      {"uint16", "UInt16Storage", 2, -1, "", false},
      {"uint32", "UInt32Storage", 4, -1, "", false},
      {"uint64", "UInt64Storage", 8, -1, "", false},
      {"float8_e5m2", "Float8_e5m2Storage", 1, -1, "", false},
      {"float8_e4m3fn", "Float8_e4m3fnStorage", 1, -1, "", false},
      {"float8_e5m2fnuz", "Float8_e5m2fnuzStorage", 1, -1, "", false},
      {"float8_e4m3fnuz", "Float8_e4m3fnuzStorage", 1, -1, "", false},
  };
  return table;
}

namespace {

template <class Field>
const Dtype* find(std::string_view value, Field field) {
  if (value.empty()) return nullptr;
  for (const Dtype& d : dtypes())
    if (d.*field == value) return &d;
  return nullptr;
}

}  // namespace

const Dtype* dtype_named(std::string_view name) { return find(name, &Dtype::name); }
const Dtype* dtype_of_storage(std::string_view storage) { return find(storage, &Dtype::storage); }
const Dtype* dtype_of_npy_descr(std::string_view descr) { return find(descr, &Dtype::npy_descr); }

const Dtype* dtype_of_safetensors(std::string_view code) {
  // the safetensors format's dtype names (its Dtype enum) and the torch dtype each stands for,
  // as safetensors.torch maps them
  static const std::pair<std::string_view, std::string_view> kCodes[] = {
      {"F64", "float64"},       {"F32", "float32"},         {"F16", "float16"},
      {"BF16", "bfloat16"},     {"I64", "int64"},           {"I32", "int32"},
      {"I16", "int16"},         {"I8", "int8"},             {"U8", "uint8"},
      {"BOOL", "bool"},         {"U16", "uint16"},          {"U32", "uint32"},
      {"U64", "uint64"},        {"F8_E5M2", "float8_e5m2"}, {"F8_E4M3", "float8_e4m3fn"},
      {"C64", "complex64"},
  };
  for (const auto& [name, dtype] : kCodes)
    if (name == code) return dtype_named(dtype);
  return nullptr;
}

std::string shape_dtype_names() {
  std::string names;
  for (const Dtype& d : dtypes())
    if (d.shape_dtype) names += (names.empty() ? "" : ", ") + std::string(d.name);
  return names;
}

}  // namespace vin::diagnostics
