#include "vin/diagnostics/diff/record_sources.h"

#include "vin/diagnostics/archive/archive_layout.h"
#include "vin/diagnostics/config/inspect_config.h"
#include "vin/diagnostics/records/error.h"

namespace vin::diagnostics {

RecordSet load_record_set(const std::string& path, const LibTorchInspector& fallback) {
  if (file_starts_with(path, "PK")) return record_set(describe_archive(path, {}, fallback), path);
  if (looks_like_record_file(path))
    return naming_out_of_memory(path, "reading the records",
                                [&] { return read_record_file(path); });
  return record_set(inspect_config_file(path), path);
}

}  // namespace vin::diagnostics
