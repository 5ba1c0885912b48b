// inspect-model of a weights file (contract 11): a state dict, checkpoint or safetensors file
// read as data, nothing in it run, and described as the model its keys tell (state_dict_model).
#pragma once

#include "vin/diagnostics/archive/file_kind.h"
#include "vin/diagnostics/archive/torch_save_file.h"
#include "vin/diagnostics/records/model_metadata.h"

namespace vin::diagnostics {

/// Whether describe_weights_file reads files of `kind`.
bool is_weights_kind(FileKind kind);

/// The model a torch.save file of any format holds (TorchSaveZip, LegacyTorchSave): its state
/// dict's modules and tensors, the tensors outside it and its other values (checkpoint.h).
ModelMetadata describe_torch_save(const TorchSaveSource& saved, const InspectDetails& details);

/// The model `file` holds (its WeightsFile record in the details): its tensors by key, with
/// details.tensors their TensorMetadata and data_crc32 (each tensor's bytes read once, a piece
/// at a time). Throws Error naming the file and the entry for anything the format forbids.
ModelMetadata describe_weights_file(const ClassifiedFile& file, const InspectDetails& details);

}  // namespace vin::diagnostics
