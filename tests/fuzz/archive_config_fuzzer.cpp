// Fuzz target: inspect-config on an archive: the zip checks made before LibTorch
// (open_torchscript_archive) and the single-record read of extra/config.yaml, then the walk.
// LibTorch is not involved; mutated and truncated zips must end in vin::diagnostics::Error.
#include <cstddef>
#include <cstdint>
#include <sstream>

#include "fuzz_input.h"
#include "vin/diagnostics/config/inspect_config.h"
#include "vin/diagnostics/output/output_format.h"
#include "vin/diagnostics/records/error.h"
#include "vin/diagnostics/formats/model_file.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  namespace vd = vin::diagnostics;
  const std::string& path = vin::fuzz::write_scratch_file(data, size, ".pt");
  try {
    const vd::ModelStructureSpec spec = vd::inspect_config_file(path);
    std::ostringstream out;
    vd::write_structure_spec(out, spec, vd::OutputFormat::jsonl);
  } catch (const vd::Error&) {
  }
  return 0;
}
