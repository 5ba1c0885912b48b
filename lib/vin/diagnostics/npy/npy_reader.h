// NumPy's .npy and .npz files, read into plain byte buffers (no LibTorch here). The .npy header
// is parsed by hand (it is a small Python literal); .npz members are read with libzip, stored
// or deflated. Every size comes from a checked header before anything is allocated.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "vin/diagnostics/container/input_file.h"
#include "vin/diagnostics/container/zip_archive.h"
#include "vin/diagnostics/text/dtypes.h"

namespace vin::diagnostics {

/// Element kinds numpy writes for numbers and bools.
enum class NpyKind { boolean, signed_integer, unsigned_integer, floating, complex };

/// One array: its element type, shape and bytes, converted to this machine's byte order.
struct NpyArray {
  std::string name;  ///< the .npz member name without ".npy" (empty for a lone .npy file)
  NpyKind kind = NpyKind::floating;
  std::size_t item_size = 0;        ///< bytes per element (complex: both parts)
  const Dtype* dtype = nullptr;     ///< its row of the one dtype table (text/dtypes.h)
  std::vector<std::int64_t> shape;  ///< empty for a 0-d array
  bool fortran_order = false;       ///< data is column-major (first index varies fastest)
  std::vector<unsigned char> data;  ///< numel * item_size bytes, native byte order

  std::int64_t numel() const;
  /// the dtype table's name of the element type, e.g. "float32", "uint8", "complex64".
  std::string dtype_name() const;
};

/// Parses a whole .npy image held in memory. `source` names it in error messages (the file,
/// and the member for an .npz). Throws Error for anything it cannot read faithfully.
NpyArray parse_npy(std::string_view bytes, const std::string& source);

/// Reads a .npy file.
NpyArray read_npy_file(const std::string& path);
/// The same for a file opened already.
NpyArray read_npy_file(const InputFile& file);

/// The names of an .npz file's arrays (its members without `.npy`), in archive order, read
/// from its directory alone. Throws UsageError naming the file and the name where two members
/// give one name (`x.npy` twice): numpy.load would silently keep one of them, so which array
/// an input or a saved side is would be a guess.
std::vector<std::string> npz_array_names(const ZipArchive& zip);

/// Reads every array of an .npz file (numpy.savez / savez_compressed), in archive order
/// (npz_array_names' check first).
std::vector<NpyArray> read_npz_file(const std::string& path);
/// The same for a zip opened already (its members checked when it was opened).
std::vector<NpyArray> read_npz_file(const ZipArchive& zip);

}  // namespace vin::diagnostics
