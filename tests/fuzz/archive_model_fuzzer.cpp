// Fuzz target: inspect-model on an archive: the zip checks, then loading with LibTorch
// (torch::jit::load: data.pkl, constants, code compiled from code/) and the module walk, then
// the jsonl writer. Mutated and truncated zips must end in vin::diagnostics::Error.
#include <cstddef>
#include <cstdint>
#include <sstream>

#include "fuzz_input.h"
#include "vin/diagnostics/output/output_format.h"
#include "vin/diagnostics/records/error.h"
#include "vin/diagnostics/torch/inspect_model.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  namespace vd = vin::diagnostics;
  const std::string& path = vin::fuzz::write_scratch_file(data, size, ".pt");
  try {
    const vd::ModelMetadata model = vd::describe_with_libtorch(path);
    std::ostringstream out;
    vd::write_model_metadata(out, model, vd::OutputFormat::jsonl);
  } catch (const vd::Error&) {
  }
  return 0;
}
