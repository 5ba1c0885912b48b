// Fuzz target: scan's three readers of what a file holds. The bytes as one pickle stream
// (scan_pickle, which judges every stream of every file scan reads), as a whole file (scan_input:
// the format table, zips and tars opened, files inside them, a damaged zip read leniently by
// lenient_zip's hand-written header walk) and as TorchScript source run at load
// (judge_load_time_code). Any bytes must end in a verdict, never a crash, a hang or an
// allocation the input's length does not bound.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "vin/diagnostics/container/input_file.h"
#include "vin/diagnostics/scan/file_scan.h"
#include "vin/diagnostics/scan/load_time_code.h"
#include "vin/diagnostics/scan/pickle_scan.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace vin::diagnostics;
  static const AllowList allowed;
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  const auto verdict = scan_pickle(bytes, allowed);
  // a verdict is one of three, and only a stream that reached STOP can be weights-only
  if (!verdict.runs_code && !verdict.cannot_judge && !verdict.stopped) __builtin_trap();

  const FileScan file = scan_input(InputFile::from_bytes("fuzz.pt", bytes), allowed);
  const std::string& v = file.summary.verdict;
  if (v != "weights-only" && v != "runs-code" && v != "cannot-judge") __builtin_trap();

  for (const LoadTimeFinding& f : judge_load_time_code({{"archive/code/__torch__/m.py", std::string(bytes)}}))
    if (f.reason.empty()) __builtin_trap();
  return 0;
}
