// Fuzz target: a YAML config rendering through the inspect-config walk (yaml-cpp, tags, budgets)
// and then through the jsonl and table writers, so strange keys and values must also encode.
#include <cstddef>
#include <cstdint>
#include <sstream>
#include <string>

#include "vin/diagnostics/config/inspect_config.h"
#include "vin/diagnostics/output/output_format.h"
#include "vin/diagnostics/records/error.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  namespace vd = vin::diagnostics;
  try {
    const vd::ModelStructureSpec spec =
        vd::inspect_config(std::string(reinterpret_cast<const char*>(data), size), "fuzz.yaml");
    std::ostringstream out;
    vd::write_structure_spec(out, spec, vd::OutputFormat::jsonl);
    vd::write_structure_spec(out, spec, vd::OutputFormat::table);
  } catch (const vd::Error&) {
  }
  return 0;
}
