// inspect_config: the configuration tree described by its YAML rendering
// (docs/config-rendering.md), without constructing anything. Uses yaml-cpp; nothing here depends on
// LibTorch.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "vin/diagnostics/formats/file_kind.h"
#include "vin/diagnostics/records/config_records.h"
#include "vin/diagnostics/records/record_value.h"

namespace vin::diagnostics {

/// The contents of the fields the walk records without walking them (a mapping that is not a model,
/// a sequence: their records hold a type marker), by the field's path: mappings as JSON objects,
/// sequences as arrays (a model in a sequence, walked on its own, as its type marker), scalars as
/// ConfigFieldSpec values. What diff compares inside such fields.
using UnwalkedValues = std::vector<std::pair<std::vector<std::string>, Json>>;

/// Walks a rendering held in `text`; `source` names it in errors ("FILE:LINE:COLUMN: ...").
/// Throws Error for malformed YAML, a root that is not a mapping, a declared field with no value,
/// a malformed `__declared__`, and documents too deep or too large to walk. When `unwalked` is
/// given it receives the contents of the fields that are not walked (within the same budget).
ModelStructureSpec inspect_config(const std::string& text, const std::string& source,
                                  UnwalkedValues* unwalked = nullptr);

/// Reads the rendering from a .yaml/.yml file, or from the `config.yaml` extra file of a
/// TorchScript archive (that one record only: no module is loaded, no tensor data read).
ModelStructureSpec inspect_config_file(const std::string& path, UnwalkedValues* unwalked = nullptr);
/// The same for a file opened and told apart already (classify_file): a TorchScript archive's
/// config.yaml, or YAML; any other file refused as open_model_file refuses it (kConfig).
ModelStructureSpec inspect_config_file(const ClassifiedFile& file,
                                       UnwalkedValues* unwalked = nullptr);

}  // namespace vin::diagnostics
