// inspect_model: the registered state of a loaded TorchScript module, as docs/records.md describes
// it.
#pragma once

#include <torch/csrc/jit/api/module.h>

#include <cstdint>
#include <string>

#include "vin/diagnostics/torchscript/archive_layout.h"
#include "vin/diagnostics/records/model_metadata.h"

namespace vin::diagnostics {

/// Describes registered state without running a forward pass: modules in named_modules order
/// (the root first as "<root>", a module object reachable at several paths listed once, at its
/// first), per-module counts of state registered directly on it (parameter slots holding None
/// count zero; buffers by TorchScript's buffer flag), and model totals that count each parameter
/// tensor once. Reads only: training flags, devices and tensors are left as they are.
/// `details` adds TensorMetadata (with the CRC-32 of each storage's bytes, which is what the
/// archive's zip directory records), attributes with the class's constants, and the root's
/// method signatures, as docs/records.md describes them, within a detail budget of
/// `bytes_read` (records/detail_budget.h: what the module was read from; 0 for the least).
ModelMetadata inspect_model(const torch::jit::Module& model, const InspectDetails& details = {},
                            std::uint64_t bytes_read = 0);

/// A module's type as the records name it: its class's Python name ("torch.nn.modules.linear.
/// Linear"), or "<unnamed>".
std::string module_type_name(const torch::jit::Module& module);

/// Loads the probed TorchScript archive on the CPU (load_torchscript_archive, through the file
/// the probe opened) and inspects it.
ModelMetadata describe_with_libtorch(const ArchiveLayout& archive,
                                     const InspectDetails& details = {});
/// The same for the archive at `path` (open_torchscript_archive first: formats/model_file.h).
ModelMetadata describe_with_libtorch(const std::string& path, const InspectDetails& details = {});

}  // namespace vin::diagnostics
