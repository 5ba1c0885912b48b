// Fuzz target: the project's own pickle reader (read_pickle), which inspect-model runs on every
// archive's data.pkl. Streams outside its subset must end in UnsupportedPickle, never a crash or
// an allocation the stream's length does not bound.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "vin/diagnostics/pickle/pickle_reader.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    vin::diagnostics::read_pickle(std::string_view(reinterpret_cast<const char*>(data), size));
  } catch (const vin::diagnostics::UnsupportedPickle&) {
  }
  return 0;
}
