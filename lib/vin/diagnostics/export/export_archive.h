// torch.export archives (`.pt2`, contract 10) read as data, without Python or LibTorch: the flat
// zip torch 2.1-2.7 write (serialized_exported_program.json at the zip's root), the PT2 Archive
// of 2.8 on (one root folder: archive_format "pt2", models/<name>.json, the weights as raw
// storages described by data/weights/<name>_weights_config.json from 2.9), and AOTInductor
// packages (compiled code, no program), which are named and refused. The program's JSON is read
// by bounded_json; nothing in the file is run.
#pragma once

#include <optional>
#include <string>

#include "vin/diagnostics/container/zip_archive.h"
#include "vin/diagnostics/records/error.h"
#include "vin/diagnostics/records/model_metadata.h"

namespace vin::diagnostics {

enum class ExportLayout {
  export_zip,   ///< torch 2.1-2.7: the program and nested torch.save files at the zip's root
  pt2_archive,  ///< torch 2.8 on: everything under one root folder, models/<name>.json
  aoti_package  ///< AOTInductor's compiled models (data/aotinductor/), no program
};

/// An archive named but not described: an AOTInductor package (compiled code, no program). Its
/// ExportArchive record (with `aoti`) is printed before the refusal (contract 10.3).
class UndescribedArchive : public Error {
 public:
  UndescribedArchive(ExportArchive archive, const std::string& why)
      : Error(why), archive_(std::move(archive)) {}
  const ExportArchive& archive() const { return archive_; }

 private:
  ExportArchive archive_;
};

/// The layout of a zip that torch.export or AOTInductor wrote, or nothing for any other zip.
std::optional<ExportLayout> export_layout(const ZipArchive& zip);

/// inspect-model's records of a torch.export archive (contract 10.3): ModelMetadata with the
/// ExportArchive record in its details, one ModuleMetadata per module in named_modules() order
/// (the union of module_call_graph's paths, the nn_module_stack paths and every prefix of a
/// parameter, buffer or constant name; types where a node of the module ran, training unknown),
/// counts by the tensors' names, the totals each storage once. `model`: which program of a
/// PT2 Archive holding several ("" for the only one, or "model"). Throws Error naming the file
/// and the entry for an archive that cannot be read, UndescribedArchive for an AOTInductor
/// package (naming its models, devices and platforms); UsageError for an unknown `model`.
ModelMetadata read_export_archive(const ZipArchive& zip, const InspectDetails& details,
                                  const std::string& model = "");

}  // namespace vin::diagnostics
