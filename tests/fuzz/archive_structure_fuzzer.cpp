// Fuzz target: inspect-model's reader of an archive without LibTorch (read_archive_metadata: the
// zip checks, data.pkl through read_pickle, class headers from code/), plain and with every
// detail (tensors, attributes and constants from printed literals, signatures), then the jsonl
// writer.
// Mutated and truncated zips must end in vin::diagnostics::Error or a fallback, never a crash.
#include <cstddef>
#include <cstdint>
#include <sstream>

#include "fuzz_input.h"
#include "vin/diagnostics/archive/archive_structure.h"
#include "vin/diagnostics/output/output_format.h"
#include "vin/diagnostics/records/error.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  namespace vd = vin::diagnostics;
  const std::string& path = vin::fuzz::write_scratch_file(data, size, ".pt");
  try {
    const vd::ArchiveLayout archive = vd::probe_torchscript_archive(path);
    for (const vd::InspectDetails details :
         {vd::InspectDetails{}, vd::InspectDetails{true, true, true}})
      if (const auto model = vd::read_archive_metadata(archive, details)) {
        std::ostringstream out;
        vd::write_model_metadata(out, *model, vd::OutputFormat::jsonl);
      }
  } catch (const vd::Error&) {
  }
  return 0;
}
