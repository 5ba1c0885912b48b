// inspect-model without LibTorch: the records of a TorchScript archive read from the archive
// itself (issue 7). The LibTorch path (inspect_model on a loaded module) stays the reference; this
// reader must give identical records, and answers only when it understands the whole archive.
#pragma once

#include <optional>
#include <string>

#include "vin/diagnostics/model_metadata.h"

namespace vin::diagnostics {

/// The inspect-model records of the TorchScript archive at `path`, from its zip directory,
/// data.pkl (read_pickle) and the class headers under code/ (`class X(Module):`,
/// `__parameters__`, `__buffers__`); no data/ record is read. Nothing, with the reason in
/// `why_not`, when the archive holds anything this reader does not model (an unknown pickle
/// opcode, a module class without a header, a module whose state is not a dict, a parameter
/// rebuilt by an unknown function, ...): the caller then asks LibTorch. Throws Error for files
/// that are not TorchScript archives (probe_torchscript_archive) or records it cannot read.
std::optional<ModelMetadata> read_model_structure(const std::string& path,
                                                  std::string* why_not = nullptr);

}  // namespace vin::diagnostics
