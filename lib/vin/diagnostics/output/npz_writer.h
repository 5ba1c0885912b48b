// NumPy's .npz format written as it goes: a zip of stored (uncompressed) .npy members, each
// written once from its bytes, through OutputFile, so that the file is complete or absent.
// `numpy.load(path)[name]` reads each member back. No zip64: a file stays under 4 GiB and 65,535
// members (fits() says whether one more does).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "vin/diagnostics/output/output_sink.h"

namespace vin::diagnostics {

/// One array to write: numpy's type string (`<f4`, `|b1`, ...), its shape and its C-order bytes
/// in this machine's (little-endian) byte order.
struct NpyView {
  std::string_view descr;
  std::vector<std::int64_t> shape;
  const void* data = nullptr;
  std::size_t nbytes = 0;
};

class NpzWriter {
 public:
  /// Starts writing to `path` (OutputFile's rules); throws Error naming it when it cannot.
  explicit NpzWriter(const std::string& path);
  /// The same for an output an OutputPlan staged: written in place.
  explicit NpzWriter(const PlannedOutput& planned);

  /// Whether a member `name` of `nbytes` data bytes still fits the format's limits.
  bool fits(const std::string& name, std::size_t nbytes) const;
  /// Writes the member `name` + ".npy". Throws Error on a failed write (the file is then
  /// abandoned), std::length_error when it does not fit().
  void add(const std::string& name, const NpyView& array);
  /// Writes the zip directory and puts the file in place.
  void finish();

 private:
  struct Entry {
    std::string name;
    std::uint32_t crc;
    std::uint32_t size;
    std::uint32_t offset;
  };
  OutputFile file_;
  std::vector<Entry> entries_;
  std::uint64_t offset_ = 0;
};

/// numpy's .npy header (format 1.0, padded to 64 bytes) for `descr` and `shape`.
std::string npy_header(std::string_view descr, const std::vector<std::int64_t>& shape);

}  // namespace vin::diagnostics
