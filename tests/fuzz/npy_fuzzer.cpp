// Fuzz target: one .npy file held in memory (parse_npy), the reader behind .npy inputs and every
// member of an .npz. Bad bytes must end in vin::diagnostics::Error; anything else is a finding.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "vin/diagnostics/npy/npy_reader.h"
#include "vin/diagnostics/records/error.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    vin::diagnostics::parse_npy(std::string_view(reinterpret_cast<const char*>(data), size),
                                "fuzz.npy");
  } catch (const vin::diagnostics::Error&) {
  }
  return 0;
}
