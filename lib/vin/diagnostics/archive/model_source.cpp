#include "vin/diagnostics/archive/model_source.h"

#include "vin/diagnostics/archive/archive_structure.h"
#include "vin/diagnostics/records/error.h"

namespace vin::diagnostics {

ModelMetadata describe_archive(const std::string& path, const InspectDetails& details,
                               const LibTorchInspector& fallback) {
  // the probe reads the zip directory: its allocations are the structure reader's too
  const ArchiveLayout archive = naming_out_of_memory(
      path, "reading the archive's structure", [&] { return probe_torchscript_archive(path); });
  return describe_archive(archive, details, fallback);
}

ModelMetadata describe_archive(const ArchiveLayout& archive, const InspectDetails& details,
                               const LibTorchInspector& fallback) {
  const std::string& path = archive.path();
  std::string why_not;
  auto structure = naming_out_of_memory(path, "reading the archive's structure", [&] {
    return read_archive_metadata(archive, details, &why_not);
  });
  if (structure) return std::move(*structure);
  if (fallback) return fallback(archive, details, why_not);
  throw Error(path + ": cannot be described without running the archive's code (" + why_not +
              "); vin-inspect never does that on its own: " + kLoadWithLibTorchFlag +
              " reads it with LibTorch's loader, which runs the archive's TorchScript");
}

}  // namespace vin::diagnostics
