// Fuzz target: a saved jsonl record file as one side of `diff` (load_record_set: told apart by
// content, then parsed record by record). Zip-looking inputs are skipped: archive_model_fuzzer
// covers that path, and LibTorch would only slow this target down. Each line, and the whole
// input, is also read by both of the tool's JSON readers, which must agree (json_scan_parity.h):
// the scanner diff reads record lines with accepts what the parser accepts, nothing else.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "fuzz_input.h"
#include "json_scan_parity.h"
#include "vin/diagnostics/diff/record_sources.h"
#include "vin/diagnostics/records/error.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size >= 2 && data[0] == 'P' && data[1] == 'K') return -1;  // not added to the corpus
  const std::string text(reinterpret_cast<const char*>(data), size);
  const auto agree = [](const std::string& piece) {
    if (const auto wrong = vin::test::json_scan_disagreement(piece)) {
      std::fprintf(stderr, "json scan disagrees with the parser: %s\n", wrong->c_str());
      std::abort();
    }
  };
  agree(text);
  for (std::size_t at = 0, end = 0; end < text.size(); at = end + 1) {
    end = std::min(text.find('\n', at), text.size());
    agree(text.substr(at, end - at));
  }
  const std::string& path = vin::fuzz::write_scratch_file(data, size, ".jsonl");
  try {
    vin::diagnostics::load_record_set(
        path, [](const vin::diagnostics::ArchiveLayout&, const vin::diagnostics::InspectDetails&,
                 const std::string&) {
          return vin::diagnostics::ModelMetadata("", 0, 0, {});  // archives are skipped above
        });
  } catch (const vin::diagnostics::Error&) {
  }
  return 0;
}
