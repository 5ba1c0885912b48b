// TorchScript archives as PyTorch 1.0 to 1.2 wrote them: TOP/model.json (a torch.ModelDef
// protobuf printed as JSON: the module tree, each module's parameters, buffers and attributes, and
// a table of tensors), TOP/attributes.pkl (the attributes' values), TOP/tensors/N (the storages)
// and TOP/code/NAME.py (each module's methods as top-level `def`s). PyTorch 1.3 replaced the
// format with data.pkl; LibTorch 2 and builds of 1.x without legacy import (Debian's) cannot load
// it any more. inspect-model reads it as data, as LibTorch 1.2's loader
// (torch/csrc/jit/import_legacy.cpp) built the module from it; nothing is run.
#pragma once

#include <string>

#include "vin/diagnostics/container/zip_archive.h"
#include "vin/diagnostics/records/model_metadata.h"

namespace vin::diagnostics {

/// The inspect-model records of the model.json archive `zip` (its records under `prefix`, the
/// top folder with its slash). A module's type is its qualified name as the 1.2 loader made it
/// (the root's name, then each submodule's attribute name: `net.conv1`); `training` is the
/// module's `training` attribute where it has one, else true (LibTorch's default). Throws Error
/// naming the file and record for what it cannot read (malformed JSON, a tensor id or attribute
/// id out of range, an unknown data type, an unsafe attributes.pkl).
ModelMetadata read_legacy_archive_metadata(const ZipArchive& zip, const std::string& prefix,
                                           const InspectDetails& details);

}  // namespace vin::diagnostics
