// PyTorch's dtypes as this tool knows them, in one table: the name records print, the storage
// class a pickle names, the element size, numpy's type and LibTorch's scalar type. Every reader
// and writer that maps between these looks here (torch/dtype_names.h adds LibTorch's enum).
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace vin::diagnostics {

/// One dtype.
struct Dtype {
  std::string_view name;     ///< torch's name without "torch.": "float16"
  std::string_view storage;  ///< the storage class pickles name: "HalfStorage" (torch.HalfStorage)
  int element_size;          ///< bytes per element, as Python's element_size()
  /// c10::ScalarType's value for this dtype (torch/dtype_names.cpp checks each against the enum
  /// of the LibTorch it is built with); -1 where LibTorch 1.13 has no such type
  int scalar_type;
  /// numpy's little-endian descr ("<f2", "|b1"); empty where numpy has no type for it
  std::string_view npy_descr;
  /// whether `--shape NAME=DIMS:DTYPE` makes it (the first ten rows, in the order messages list)
  bool shape_dtype;
  /// whether a tensor is its storage's bytes, one element per storage item (false for
  /// complex32 and the sub-byte quantized types, which torch.save's reader does not rebuild)
  bool storage_items_are_elements = true;

  /// Python's str(dtype): "torch.float16".
  std::string python_name() const { return "torch." + std::string(name); }
};

/// Every dtype the tool knows, the --shape dtypes first.
const std::vector<Dtype>& dtypes();

/// The dtype of a name without "torch." ("float16"), of a storage class name without "torch."
/// ("HalfStorage"), of a numpy descr ("<f2"); nullptr for none.
const Dtype* dtype_named(std::string_view name);
const Dtype* dtype_of_storage(std::string_view storage);
const Dtype* dtype_of_npy_descr(std::string_view descr);
/// The dtype of a safetensors header's dtype name ("F16", "BF16", "F8_E4M3"); nullptr for none.
const Dtype* dtype_of_safetensors(std::string_view code);

/// The dtypes --shape makes, comma-separated, for messages: "float32, float16, ...".
std::string shape_dtype_names();

}  // namespace vin::diagnostics
