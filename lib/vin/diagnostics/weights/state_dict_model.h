// A model as a weights file tells it (contract 11.2): modules from the dotted prefixes of a
// state dict's keys, each tensor registered on the module its key names. Every weights format
// (safetensors, torch.save's zip, legacy and tar files, sharded sets) hands its tensors here, so
// that the same weights give the same records whatever file holds them.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "vin/diagnostics/records/model_metadata.h"
#include "vin/diagnostics/text/dtypes.h"

namespace vin::diagnostics {

/// One tensor of a state dict.
struct StateDictTensor {
  std::string key;       ///< from the file's root (TensorMetadata's key)
  std::string dict_key;  ///< from the state dict: the module path, a dot, the tensor's name
  const Dtype* dtype = nullptr;
  std::vector<std::int64_t> shape;
  std::int64_t numel = 0;
  std::int64_t nbytes = 0;
  std::optional<std::string> file;  ///< the shard that holds it
  /// what tells two keys of one tensor (its storage, offset, shape and strides) from two
  /// tensors; empty for a tensor no other key can share (a safetensors tensor)
  std::string identity;
  /// the storage it lies in (its key), which views of it share whatever their offsets and
  /// shapes (TensorMetadata's shared_with); empty where no other key can share it
  std::string storage;
  std::optional<std::string> data_crc32;  ///< with --tensors
  /// what a torch.save file says and a safetensors file does not
  std::optional<std::string> device;
  std::optional<bool> requires_grad;
  std::optional<std::string> storage_crc32;  ///< its storage record's CRC (a zip member's)
  /// outside the state dict (a checkpoint's optimizer state): listed after the modules under
  /// its whole key (kind "checkpoint", ModelDetails' checkpoint_tensors), counted nowhere
  bool in_state_dict = true;
};

/// The module path and the tensor's name of a state dict key: split at its last dot. A key
/// with an empty segment before its name (`a..w`, `.w`) is not a module path: the whole key is
/// then the name of a tensor on the root.
std::pair<std::string, std::string> module_and_name(const std::string& dict_key);

/// Whether module path `a` comes before `b`: segment by segment, numeric segments in numeric
/// order and before other segments, others by their bytes, a path before its submodules (the
/// order of the records where a file sorts its names as text: `layers.2` before `layers.10`).
bool module_path_before(const std::string& a, const std::string& b);

/// The order of a weights file's modules (contract 11.2: named_modules() order, as far as the
/// file tells it).
enum class ModuleOrder {
  /// the order of the file's keys, as torch.save keeps a state dict's: each module where a key
  /// first names it, depth first, a parent before its children (what named_modules() gives
  /// for a state_dict() saved as it was)
  first_key,
  /// module_path_before: where the file sorts its names as text (safetensors writers do), the
  /// keys' order is no module's, and numeric segments are put back in numeric order
  sorted_names,
};

/// The model of `tensors` (in the file's order): a ModuleMetadata for the root, every module a
/// key names and their ancestors, in `order`; each with its tensors' elements as
/// direct_parameters (a weights file does not tell buffers from parameters:
/// trainable_parameters, direct_buffers, training and module_type are none); the totals and
/// `weights.dtypes` counting each tensor once. With details.tensors, a TensorMetadata per key,
/// in the file's order, those outside the state dict as ModelDetails' checkpoint_tensors, and
/// the bytes. Throws Error naming `file` when the module paths add up past kMaxModulePathBytes
/// or the counts overflow.
ModelMetadata model_of_state_dict(const std::string& file, const std::vector<StateDictTensor>& tensors,
                                  WeightsFile weights, const InspectDetails& details,
                                  ModuleOrder order);

}  // namespace vin::diagnostics
