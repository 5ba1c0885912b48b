// What inspect-model says of a weights file beyond its modules (contract 11.2): the WeightsFile
// record, first of its records. Plain values; nothing here depends on LibTorch.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "vin/diagnostics/records/record_value.h"

namespace vin::diagnostics {

/// A value of a checkpoint that is not a tensor (contract 11.2): a scalar with its value
/// (`epoch`, `loss`), an object named by its class and never constructed (value null).
struct CheckpointValue {
  std::string key;   ///< dotted from the file's root
  std::string type;  ///< Python's type name ("int", "str") or an object's class
  Json value;        ///< the scalar (strings cut at 200 characters), or null

  friend bool operator==(const CheckpointValue& a, const CheckpointValue& b) {
    return a.key == b.key && a.type == b.type && same_json(a.value, b.value);
  }
};

/// A state dict, checkpoint, safetensors file or sharded set, as a container.
struct WeightsFile {
  std::string file;    ///< as the command line named it
  std::string format;  ///< "safetensors", "torch_save_zip" (and, as they are read, ...)
  std::vector<std::string> files;  ///< a sharded set's shards; empty for one file
  /// the keys from the file's root to its state dict ([] for a bare state dict)
  Json state_dict_path = Json::array();
  Json metadata;  ///< safetensors' `__metadata__`; null where the file has none
  /// the state dict's elements per dtype ("torch.float32"), by dtype name, each tensor once
  std::vector<std::pair<std::string, std::int64_t>> dtypes;
  /// a checkpoint's values that are not tensors, in the file's order (CheckpointValue records
  /// of their own after this one)
  std::vector<CheckpointValue> values;

  friend bool operator==(const WeightsFile& a, const WeightsFile& b) {
    return a.file == b.file && a.format == b.format && a.files == b.files &&
           same_json(a.state_dict_path, b.state_dict_path) && same_json(a.metadata, b.metadata) &&
           a.dtypes == b.dtypes && a.values == b.values;
  }
};

}  // namespace vin::diagnostics
