#include "vin/diagnostics/archive/model_source.h"

#include <filesystem>

#include "vin/diagnostics/archive/archive_structure.h"
#include "vin/diagnostics/archive/export_archive.h"
#include "vin/diagnostics/archive/legacy_archive.h"
#include "vin/diagnostics/archive/weights_file.h"
#include "vin/diagnostics/records/error.h"

namespace vin::diagnostics {

ModelMetadata describe_archive(const std::string& path, const InspectDetails& details,
                               const LibTorchInspector& fallback) {
  // the zip directory read here: its allocations are the structure reader's too
  // a directory stands for the sharded set or the weights file it holds (a Hugging Face
  // checkpoint's folder)
  std::error_code ec;
  const std::string named =
      std::filesystem::is_directory(path, ec) ? weights_in_directory(path) : path;
  const ClassifiedFile file = naming_out_of_memory(path, "reading the archive's structure", [&] {
    return classify_file(named, "a TorchScript archive");
  });
  return describe_archive(file, details, fallback);
}

ModelMetadata describe_archive(const ClassifiedFile& file, const InspectDetails& details,
                               const LibTorchInspector& fallback) {
  if (is_weights_kind(file.kind)) return describe_weights_file(file, details);
  if (file.kind == FileKind::torch_export)
    return naming_out_of_memory(file.path(), "reading the archive", [&] {
      return read_export_archive(*file.zip, details, details.model);
    });
  if (file.kind == FileKind::legacy_torchscript)
    return naming_out_of_memory(file.path(), "reading the archive's structure", [&] {
      return read_legacy_archive_metadata(*file.zip, file.zip->first_folder(), details);
    });
  return describe_archive(probe_torchscript_archive(file), details, fallback);
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
