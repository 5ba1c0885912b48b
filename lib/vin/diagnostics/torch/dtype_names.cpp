#include "vin/diagnostics/torch/dtype_names.h"

#include <algorithm>
#include <cctype>

namespace vin::diagnostics {

std::string python_dtype_name(c10::ScalarType type) {
  switch (type) {
    case c10::ScalarType::Byte:
      return "torch.uint8";
    case c10::ScalarType::Char:
      return "torch.int8";
    case c10::ScalarType::Short:
      return "torch.int16";
    case c10::ScalarType::Int:
      return "torch.int32";
    case c10::ScalarType::Long:
      return "torch.int64";
    case c10::ScalarType::Half:
      return "torch.float16";
    case c10::ScalarType::Float:
      return "torch.float32";
    case c10::ScalarType::Double:
      return "torch.float64";
    case c10::ScalarType::ComplexHalf:
      return "torch.complex32";
    case c10::ScalarType::ComplexFloat:
      return "torch.complex64";
    case c10::ScalarType::ComplexDouble:
      return "torch.complex128";
    case c10::ScalarType::Bool:
      return "torch.bool";
    case c10::ScalarType::QInt8:
      return "torch.qint8";
    case c10::ScalarType::QUInt8:
      return "torch.quint8";
    case c10::ScalarType::QInt32:
      return "torch.qint32";
    case c10::ScalarType::BFloat16:
      return "torch.bfloat16";
    case c10::ScalarType::QUInt4x2:
      return "torch.quint4x2";
    case c10::ScalarType::QUInt2x4:
      return "torch.quint2x4";
    default: {
      // a type newer than this table: LibTorch's own name, lower-cased, is the best guess
      std::string name = c10::toString(type);
      std::transform(name.begin(), name.end(), name.begin(),
                     [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
      return "torch." + name;
    }
  }
}

}  // namespace vin::diagnostics
