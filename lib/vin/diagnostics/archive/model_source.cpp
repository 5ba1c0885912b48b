#include "vin/diagnostics/archive/model_source.h"

#include "vin/diagnostics/archive/archive_structure.h"
#include "vin/diagnostics/records/error.h"

namespace vin::diagnostics {

ModelMetadata describe_archive(const std::string& path, const InspectDetails& details,
                               const LibTorchInspector& fallback) {
  std::string why_not;
  auto structure = naming_out_of_memory(path, "reading the archive's structure", [&] {
    return read_archive_metadata(path, details, &why_not);
  });
  if (structure) return std::move(*structure);
  if (fallback) return fallback(path, details, why_not);
  throw Error(path + ": cannot be described without running the archive's code (" + why_not +
              "); vin-inspect never does that on its own: " + kLoadWithLibTorchFlag +
              " reads it with LibTorch's loader, which runs the archive's TorchScript");
}

}  // namespace vin::diagnostics
