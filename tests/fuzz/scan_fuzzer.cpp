// Fuzz target: scan's pickle walk (scan_pickle), which judges every stream of every file scan
// reads. Any bytes must end in a verdict (STOP, or a broken stream judged), never a crash, a
// hang or an allocation the stream's length does not bound.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "vin/diagnostics/scan/pickle_scan.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const vin::diagnostics::AllowList allowed;
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  const auto verdict = vin::diagnostics::scan_pickle(bytes, allowed);
  // a verdict is one of three, and only a stream that reached STOP can be weights-only
  if (!verdict.runs_code && !verdict.cannot_judge && !verdict.stopped) __builtin_trap();
  return 0;
}
