#include "vin/diagnostics/model_source.h"

#include "vin/diagnostics/archive_structure.h"

namespace vin::diagnostics {

ModelMetadata inspect_archive(const std::string& path, const LibTorchInspector& fallback) {
  std::string why_not;
  if (auto structure = read_model_structure(path, &why_not)) return std::move(*structure);
  return fallback(path, why_not);
}

}  // namespace vin::diagnostics
