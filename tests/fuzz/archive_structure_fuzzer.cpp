// Fuzz target: inspect-model's readers of an archive without LibTorch (describe_model_file without a
// fallback: the zip checks, data.pkl through read_pickle and class headers from code/, or a
// PyTorch 1.0-1.2 archive's model.json and attributes.pkl), plain and with every detail
// (tensors, attributes and constants from printed literals, signatures), then the jsonl writer.
// Mutated and truncated zips must end in vin::diagnostics::Error, never a crash.
#include <cstddef>
#include <cstdint>
#include <sstream>

#include "fuzz_input.h"
#include "vin/diagnostics/formats/model_file.h"
#include "vin/diagnostics/output/output_format.h"
#include "vin/diagnostics/records/error.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  namespace vd = vin::diagnostics;
  const std::string& path = vin::fuzz::write_scratch_file(data, size, ".pt");
  try {
    // describe_archive: the data.pkl reader, or the model.json reader of PyTorch 1.0 to 1.2
    const vd::ClassifiedFile file = vd::classify_file(path, "a TorchScript archive");
    for (const vd::InspectDetails& details :
         {vd::InspectDetails{}, vd::InspectDetails::everything()}) {
      const vd::ModelMetadata model = vd::describe_model_file(file, details, nullptr);
      std::ostringstream out;
      vd::write_model_metadata(out, model, vd::OutputFormat::jsonl);
    }
  } catch (const vd::Error&) {
  }
  return 0;
}
