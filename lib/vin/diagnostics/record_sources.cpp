#include "vin/diagnostics/record_sources.h"

#include <fstream>

#include "vin/diagnostics/inspect_config.h"
#include "vin/diagnostics/inspect_model.h"

namespace vin::diagnostics {

RecordSet load_record_set(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  char magic[2] = {};
  if (in) in.read(magic, 2);
  if (in && magic[0] == 'P' && magic[1] == 'K')
    return record_set(inspect_model_archive(path), path);
  if (looks_like_record_file(path)) return read_record_file(path);
  return record_set(inspect_config_file(path), path);
}

}  // namespace vin::diagnostics
