// inspect-model without LibTorch: the records of a TorchScript archive read from the archive
// itself, as data. The LibTorch path (inspect_model on a loaded module) stays the reference; this
// reader must give identical records, and answers only when it understands the whole archive.
#pragma once

#include <optional>
#include <string>

#include "vin/diagnostics/torchscript/archive_layout.h"
#include "vin/diagnostics/records/model_metadata.h"

namespace vin::diagnostics {

/// The inspect-model records of the probed TorchScript archive `layout`, from its zip directory,
/// data.pkl (read_pickle) and the class sources under code/ (read_class_sources; a module's
/// attributes from module_attributes, which reads `__setstate__` source); no data/ record is
/// read and nothing from the archive runs. Nothing, with the reason in `why_not`, when the
/// archive holds anything this reader does not model (an unknown pickle opcode, a module class
/// without a definition, a `__setstate__` that computes what the records hold, a parameter
/// rebuilt by an unknown function, ...). Throws Error for records it cannot read or a damaged
/// data.pkl.
/// `details` adds what inspect-model's --tensors, --attributes and --signature describe: tensors
/// from their rebuild calls and storage references, with the CRC-32 the zip directory records
/// for each storage; attributes from the module state and the class's constants from its source;
/// signatures from the root class's source (constants.pkl is read when a literal refers to it).
std::optional<ModelMetadata> read_archive_metadata(const ArchiveLayout& layout,
                                                   const InspectDetails& details = {},
                                                   std::string* why_not = nullptr);

}  // namespace vin::diagnostics
