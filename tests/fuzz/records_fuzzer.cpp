// Fuzz target: a saved jsonl record file as one side of `diff` (load_record_set: told apart by
// content, then parsed record by record). Zip-looking inputs are skipped: archive_model_fuzzer
// covers that path, and LibTorch would only slow this target down.
#include <cstddef>
#include <cstdint>

#include "fuzz_input.h"
#include "vin/diagnostics/diff/record_sources.h"
#include "vin/diagnostics/records/error.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size >= 2 && data[0] == 'P' && data[1] == 'K') return -1;  // not added to the corpus
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
