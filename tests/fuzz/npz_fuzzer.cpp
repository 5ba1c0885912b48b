// Fuzz target: an .npz inputs file (libzip directory, stored and deflated members, each member
// through the .npy reader). Bad bytes must end in vin::diagnostics::Error.
#include <cstddef>
#include <cstdint>

#include "fuzz_input.h"
#include "vin/diagnostics/npy/npy_reader.h"
#include "vin/diagnostics/records/error.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string& path = vin::fuzz::write_scratch_file(data, size, ".npz");
  try {
    vin::diagnostics::read_npz_file(path);
  } catch (const vin::diagnostics::Error&) {
  }
  return 0;
}
