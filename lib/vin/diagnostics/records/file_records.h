// The records that describe a file rather than a model: what inspect-model says of a weights file
// beyond its modules (contract 11.2: the WeightsFile record, first of its records, and its
// CheckpointValue records), and what scan says of any file (contract 14.2: ScanFinding,
// ScanSummary). Plain values; nothing here depends on LibTorch.
#pragma once

#include <cstdint>
#include <optional>
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

/// One thing found in a file.
struct ScanFinding {
  std::string file;
  std::optional<std::string> member;   ///< the zip or tar member; none for the file itself
  std::optional<std::uint64_t> offset;  ///< of the opcode from its stream's start; none for a
                                        ///< container finding
  std::string kind;      ///< "global", "opcode", "structure", "container", "torchscript"
  std::string name;      ///< the global (`module.qualname`), the opcode, or what is wrong
  std::string severity;  ///< "dangerous", "not-allowed", "malformed"
  bool called = false;   ///< whether the stream calls it (REDUCE, NEWOBJ, BUILD on it)
  std::string reason;    ///< one sentence
};

/// The verdict of one file.
struct ScanSummary {
  std::string file;
  std::string format;
  std::string verdict;               ///< "weights-only", "runs-code", "cannot-judge"
  std::vector<std::string> globals;  ///< every global the file imports, sorted, each once
  std::int64_t findings = 0;
  std::string torch_version;         ///< the torch whose allow-list was applied
  /// whether that torch's torch.load(weights_only=True) accepts every stream it unpickles;
  /// none for files torch.load does not read (safetensors, .npy, plain zips)
  std::optional<bool> torch_weights_only;
};

}  // namespace vin::diagnostics
