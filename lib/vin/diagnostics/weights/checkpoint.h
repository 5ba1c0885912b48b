// What a torch.save file holds, as contract 11 reads it: a bare state dict, a bare tensor, or a
// checkpoint nesting a state dict among other values (`{"model": ..., "optimizer": ...,
// "epoch": 3}`). The same walk serves every torch.save format (zip, legacy, tar): it sees only
// the values the restricted pickle reader built.
#pragma once

#include <string>
#include <vector>

#include "vin/diagnostics/pickle/pickle_reader.h"
#include "vin/diagnostics/records/file_records.h"

namespace vin::diagnostics {

/// A tensor of a checkpoint and where it lies.
struct CheckpointTensor {
  std::string key;       ///< dotted from the file's root
  std::string dict_key;  ///< from the state dict ("fc1.weight"); empty outside it
  bool in_state_dict = false;
  PickleRef tensor = nullptr;
};

struct Checkpoint {
  /// the keys from the root to the state dict ([] when the root is one, or is a bare tensor);
  /// null when the file holds none
  Json state_dict_path;
  /// every tensor, in the file's order: the state dict's and those outside it (optimizer state)
  std::vector<CheckpointTensor> tensors;
  /// every other leaf, in the file's order
  std::vector<CheckpointValue> values;
};

/// The state dict of the value `root` and its other contents. The state dict is, among the
/// dicts whose values are all tensors (at least one) under string keys, but for nn.Module's
/// `_extra_state` entries (a key `_extra_state` or ending `._extra_state`, of any value),
/// reached from the root through string keys alone, the one holding the most tensor elements
/// (the first of equals):
/// an optimizer's per-parameter state, reached through an integer key, is never taken for it.
/// A bare tensor is a state dict of itself (key ""). Dict keys and list positions join with
/// dots. Objects are CheckpointValues named by class (their state is not looked into). Throws
/// Error naming `label` when the values, shared ones followed at each reference, number more
/// than 8 Mi or their keys add up past 64 MiB.
Checkpoint read_checkpoint(PickleRef root, const std::string& label);

}  // namespace vin::diagnostics
