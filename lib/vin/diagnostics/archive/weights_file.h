// inspect-model of a weights file (contract 11): a state dict, checkpoint or safetensors file
// read as data, nothing in it run, and described as the model its keys tell (state_dict_model).
#pragma once

#include <cstddef>
#include <string>

#include "vin/diagnostics/archive/file_kind.h"
#include "vin/diagnostics/archive/torch_save_file.h"
#include "vin/diagnostics/records/model_metadata.h"

namespace vin::diagnostics {

/// Whether describe_weights_file reads files of `kind`.
bool is_weights_kind(FileKind kind);

/// The model a torch.save file of any format holds (TorchSaveZip, LegacyTorchSave,
/// TorchSaveTar): its state dict's modules and tensors, the tensors outside it and its other
/// values (checkpoint.h).
ModelMetadata describe_torch_save(const TorchSaveSource& saved, const InspectDetails& details);

/// The most entries weights_in_directory looks at.
constexpr std::size_t kMaxDirectoryEntries = 100000;

/// The weights file a directory stands for: its one sharded set's index (`*.index.json`), else
/// its one weights file (`*.safetensors`, `*.bin`, `*.pt`, `*.pth`). Throws Error naming the
/// directory and what it holds otherwise.
std::string weights_in_directory(const std::string& directory);

/// The model `file` holds (its WeightsFile record in the details): its tensors by key, with
/// details.tensors their TensorMetadata and data_crc32 (each tensor's bytes read once, a piece
/// at a time). Throws Error naming the file and the entry for anything the format forbids.
ModelMetadata describe_weights_file(const ClassifiedFile& file, const InspectDetails& details);

}  // namespace vin::diagnostics
