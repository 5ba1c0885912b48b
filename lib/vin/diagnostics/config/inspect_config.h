// inspect_config: the configuration tree described by its YAML rendering
// (docs/config-rendering.md), without constructing anything. Uses yaml-cpp; nothing here depends on
// LibTorch.
#pragma once

#include <string>

#include "vin/diagnostics/records/config_records.h"

namespace vin::diagnostics {

/// Walks a rendering held in `text`; `source` names it in errors ("FILE:LINE:COLUMN: ...").
/// Throws Error for malformed YAML, a root that is not a mapping, a declared field with no value,
/// a malformed `__declared__`, and documents too deep or too large to walk.
ModelStructureSpec inspect_config(const std::string& text, const std::string& source);

/// Reads the rendering from a .yaml/.yml file, or from the `config.yaml` extra file of a
/// TorchScript archive (that one record only: no module is loaded, no tensor data read).
ModelStructureSpec inspect_config_file(const std::string& path);

}  // namespace vin::diagnostics
