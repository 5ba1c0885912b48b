#include "vin/diagnostics/diff/record_sources.h"

#include "vin/diagnostics/archive/archive_layout.h"
#include "vin/diagnostics/archive/file_kind.h"
#include "vin/diagnostics/config/inspect_config.h"
#include "vin/diagnostics/records/error.h"

namespace vin::diagnostics {
namespace {

RecordSet configuration_side(const ClassifiedFile& file) {
  UnwalkedValues unwalked;
  const ModelStructureSpec spec = inspect_config_file(file, &unwalked);
  return record_set(spec, file.path(), std::move(unwalked));
}

}  // namespace

RecordSet load_record_set(const std::string& path, const LibTorchInspector& fallback,
                          SideKind kind) {
  // opened once, told apart once: an archive, saved records, else a YAML rendering
  const ClassifiedFile file = naming_out_of_memory(path, "reading the file", [&] {
    return classify_file(path, "an archive, a record file or a configuration");
  });
  if (file.zip) {
    if (kind == SideKind::configuration) return configuration_side(file);
    InspectDetails details = InspectDetails::everything();
    details.operators = true;  // a .pt2's OperatorCount records (a .pt has none)
    return record_set(describe_archive(file, details, fallback), path);
  }
  if (file.kind == FileKind::empty && kind != SideKind::configuration)
    throw Error(path + ": empty file: no records, no archive, no configuration rendering");
  if (file.kind == FileKind::records)
    return naming_out_of_memory(path, "reading the records",
                                [&] { return read_record_file(*file.file); });
  return configuration_side(file);
}

}  // namespace vin::diagnostics
