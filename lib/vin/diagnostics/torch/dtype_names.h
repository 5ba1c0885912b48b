// Python's names of LibTorch's scalar types, as records print them.
#pragma once

#include <c10/core/ScalarType.h>

#include <string>

namespace vin::diagnostics {

/// Python's str(dtype) for a LibTorch scalar type: "torch.float32", "torch.quint8", ...
std::string python_dtype_name(c10::ScalarType type);

}  // namespace vin::diagnostics
