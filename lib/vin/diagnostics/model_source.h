// Where inspect-model's records come from: the archive itself (read_model_structure), or, for an
// archive that reader does not understand, a fallback that loads it with LibTorch.
#pragma once

#include <functional>
#include <string>

#include "vin/diagnostics/model_metadata.h"

namespace vin::diagnostics {

/// Loads `path` with LibTorch and inspects it; `why` says why the structure reader gave up.
using LibTorchInspector =
    std::function<ModelMetadata(const std::string& path, const std::string& why)>;

/// The inspect-model records of the archive at `path`: from read_model_structure when it
/// understands the archive, else from `fallback`. Throws Error for files that are not archives.
ModelMetadata inspect_archive(const std::string& path, const LibTorchInspector& fallback);

}  // namespace vin::diagnostics
