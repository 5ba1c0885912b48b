// What inspect-model says of a weights file beyond its modules (contract 11.2): the WeightsFile
// record, first of its records. Plain values; nothing here depends on LibTorch.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "vin/diagnostics/records/record_value.h"

namespace vin::diagnostics {

/// A state dict, checkpoint, safetensors file or sharded set, as a container.
struct WeightsFile {
  std::string file;    ///< as the command line named it
  std::string format;  ///< "safetensors" (and, as they are read, "torch_save_zip", ...)
  std::vector<std::string> files;  ///< a sharded set's shards; empty for one file
  /// the keys from the file's root to its state dict ([] for a bare state dict)
  Json state_dict_path = Json::array();
  Json metadata;  ///< safetensors' `__metadata__`; null where the file has none
  /// the state dict's elements per dtype ("torch.float32"), by dtype name, each tensor once
  std::vector<std::pair<std::string, std::int64_t>> dtypes;

  friend bool operator==(const WeightsFile& a, const WeightsFile& b) {
    return a.file == b.file && a.format == b.format && a.files == b.files &&
           same_json(a.state_dict_path, b.state_dict_path) && same_json(a.metadata, b.metadata) &&
           a.dtypes == b.dtypes;
  }
};

}  // namespace vin::diagnostics
