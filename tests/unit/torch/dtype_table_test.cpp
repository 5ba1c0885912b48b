// The one dtype table (text/dtypes.h) against the LibTorch it is built with: every row's scalar
// type has the row's element size and Python name, numpy's descr where numpy has the type, and
// every LibTorch scalar type the table lacks is one newer than LibTorch 1.13.
#include <ATen/ATen.h>
#include <torch/version.h>

#include <cctype>
#include <string>

#include "vin/diagnostics/torch/dtype_names.h"

#include "doctest_after_torch.h"  // last: after glog's CHECK macros

using namespace vin::diagnostics;

TEST_CASE("each row of the dtype table is LibTorch's scalar type of that name and size") {
  int mapped = 0;
  for (const Dtype& row : dtypes()) {
    CAPTURE(std::string(row.name));
    REQUIRE(dtype_named(row.name) == &row);
    REQUIRE(dtype_of_storage(row.storage) == &row);
    const auto type = scalar_type_of(row);
    if (!type) {
      CHECK(row.scalar_type == -1);
      continue;
    }
    ++mapped;
    CHECK(dtype_of(*type) == &row);
    CHECK(python_dtype_name(*type) == "torch." + std::string(row.name));
    CHECK(static_cast<int>(c10::elementSize(*type)) == row.element_size);
    if (!row.npy_descr.empty()) {
      CHECK(dtype_of_npy_descr(row.npy_descr) == &row);
      CHECK(std::string(npy_descr(*type)) == std::string(row.npy_descr));
    } else {
      CHECK(npy_descr(*type) == nullptr);
    }
  }
  CHECK(mapped == 18);  // Byte .. QUInt2x4, LibTorch 1.13's every type
}

TEST_CASE("every scalar type of LibTorch 1.13 is in the table; newer ones are named as Python") {
  for (int value = 0; value < static_cast<int>(c10::ScalarType::NumOptions); ++value) {
    const auto type = static_cast<c10::ScalarType>(value);
    if (value <= static_cast<int>(c10::ScalarType::QUInt2x4)) {
      CHECK(dtype_of(type) != nullptr);
      continue;
    }
    CAPTURE(c10::toString(type));
    CHECK(dtype_of(type) == nullptr);
    std::string lower = c10::toString(type);
    for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    CHECK(python_dtype_name(type) == "torch." + lower);
  }
}

TEST_CASE("the --shape dtypes are the first rows, in the order messages list them") {
  CHECK(shape_dtype_names() ==
        "float32, float16, bfloat16, float64, int64, int32, int16, int8, uint8, bool");
  CHECK(dtype_named("torch.float32") == nullptr);
  CHECK(dtype_of_storage("torch.FloatStorage") == nullptr);  // the table holds class names
  CHECK(dtype_named("") == nullptr);
}
