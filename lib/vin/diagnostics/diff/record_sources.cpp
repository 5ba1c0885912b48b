#include "vin/diagnostics/diff/record_sources.h"

#include "vin/diagnostics/archive/archive_layout.h"
#include "vin/diagnostics/config/inspect_config.h"
#include "vin/diagnostics/records/error.h"

namespace vin::diagnostics {
namespace {

RecordSet configuration_side(const std::string& path) {
  UnwalkedValues unwalked;
  const ModelStructureSpec spec = inspect_config_file(path, &unwalked);
  return record_set(spec, path, std::move(unwalked));
}

}  // namespace

RecordSet load_record_set(const std::string& path, const LibTorchInspector& fallback,
                          SideKind kind) {
  if (file_starts_with(path, "PK"))
    return kind == SideKind::configuration
               ? configuration_side(path)
               : record_set(describe_archive(path, InspectDetails{true, true, true}, fallback),
                            path);
  if (looks_like_record_file(path))
    return naming_out_of_memory(path, "reading the records",
                                [&] { return read_record_file(path); });
  return configuration_side(path);
}

}  // namespace vin::diagnostics
