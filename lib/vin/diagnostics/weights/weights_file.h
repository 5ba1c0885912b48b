// A weights file's tensors as a model (contract 11): a safetensors file's header or a torch.save
// file's value (any of its three formats) read as data, nothing in it run, its state dict found
// (checkpoint.h) and made the model its keys tell (state_dict_model.h). Which file is which, and
// sets of shards, are the format table's (formats/weights_sets.h).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "vin/diagnostics/container/input_file.h"
#include "vin/diagnostics/records/model_metadata.h"
#include "vin/diagnostics/torch_save/torch_save_file.h"
#include "vin/diagnostics/weights/state_dict_model.h"

namespace vin::diagnostics {

/// What a weights file holds before it is made a model: its tensors and its container record
/// (its `format` the caller's: the format table's name of the file).
struct WeightsContent {
  std::vector<StateDictTensor> tensors;
  WeightsFile weights;
  /// a safetensors header sorts its names as text: the keys' order tells no module order
  ModuleOrder order = ModuleOrder::first_key;
};

/// A safetensors file's tensors (its header checked by every rule of the format), with
/// details.tensors each one's data_crc32 (its bytes read once, a piece at a time).
WeightsContent safetensors_content(const InputFile& file, const InspectDetails& details);

/// A torch.save file's tensors, of any of its formats (TorchSaveZip, LegacyTorchSave,
/// TorchSaveTar): its state dict's, those outside it and its other values (checkpoint.h); each
/// storage record found and checked, with details.tensors each tensor's data_crc32. Refuses,
/// naming its class, a file holding one pickled object and nothing else (torch.save(model)).
WeightsContent torch_save_content(const TorchSaveSource& saved, const InspectDetails& details);

/// The model `content` tells (model_of_state_dict), `file` naming it in errors.
ModelMetadata model_of_weights(const std::string& file, WeightsContent content,
                               const InspectDetails& details);

/// The model a torch.save file of any format holds, its WeightsFile's format `format` (the
/// format table's name).
ModelMetadata describe_torch_save(const TorchSaveSource& saved, std::string_view format,
                                  const InspectDetails& details);

}  // namespace vin::diagnostics
