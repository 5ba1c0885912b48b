// LibTorch's scalar types against the dtype table (text/dtypes.h): Python's names as records
// print them, numpy's types, and the scalar type of a table row.
#pragma once

#include <c10/core/ScalarType.h>

#include <optional>
#include <string>

#include "vin/diagnostics/text/dtypes.h"

namespace vin::diagnostics {

/// The table's row of a LibTorch scalar type; nullptr for one the table does not have.
const Dtype* dtype_of(c10::ScalarType type);

/// The LibTorch scalar type of a table row; nothing where this LibTorch has none.
std::optional<c10::ScalarType> scalar_type_of(const Dtype& dtype);

/// Python's str(dtype) for a LibTorch scalar type: "torch.float32", "torch.quint8", ...
std::string python_dtype_name(c10::ScalarType type);

/// numpy's descr for a scalar type ("<f4"), or nullptr where numpy has no such type.
const char* npy_descr(c10::ScalarType type);

}  // namespace vin::diagnostics
