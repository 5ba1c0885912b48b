// A model's element counts as a walker meets its tensors, the same for every reader
// (archive/archive_structure, archive/legacy_archive, torch/inspect_model): each module's direct
// counts (ModuleMetadata's), and the model's totals, which count a tensor once however many slots
// hold it (tied weights, a shared submodule that scripting turned into two objects), as Python's
// `module.parameters()` does. Every sum is checked: counts past 64 bits are not an answer to give.
#pragma once

#include <cstdint>
#include <unordered_set>

#include "vin/diagnostics/records/error.h"
#include "vin/diagnostics/records/model_metadata.h"

namespace vin::diagnostics {

/// Element counts that overflow 64 bits (no real model's can).
class CountOverflow : public Error {
 public:
  CountOverflow() : Error(kCountOverflowMessage) {}
};

/// `sum += n`, or CountOverflow.
inline void add_count(std::int64_t& sum, std::int64_t n) {
  if (__builtin_add_overflow(sum, n, &sum)) throw CountOverflow();
}

/// What is registered directly on one module.
struct DirectCounts {
  std::int64_t parameters = 0;
  std::int64_t trainable = 0;
  std::int64_t buffers = 0;
};

/// The model's totals; `Identity` tells two slots holding one tensor apart from two tensors (a
/// pickled value, a tensor id, a TensorImpl).
template <class Identity>
class ModelCounts {
 public:
  /// A parameter slot of `module` holding `tensor` (`nbytes`: its bytes, 0 where not described).
  void parameter(DirectCounts& module, Identity tensor, std::int64_t numel, bool trainable,
                 std::int64_t nbytes) {
    add_count(module.parameters, numel);
    if (trainable) add_count(module.trainable, numel);
    if (!parameters_.insert(tensor).second) return;
    add_count(total_, numel);
    if (trainable) add_count(trainable_, numel);
    add_count(parameter_bytes_, nbytes);
  }

  /// A buffer slot of `module` holding `tensor`.
  void buffer(DirectCounts& module, Identity tensor, std::int64_t numel, std::int64_t nbytes) {
    add_count(module.buffers, numel);
    if (buffers_.insert(tensor).second) add_count(buffer_bytes_, nbytes);
  }

  std::int64_t total() const { return total_; }
  std::int64_t trainable() const { return trainable_; }
  /// Bytes of the parameters, each tensor once.
  std::int64_t parameter_bytes() const { return parameter_bytes_; }
  /// parameter_bytes and buffer_bytes of the model's details (with --tensors).
  void put_bytes(ModelDetails& details) const {
    details.parameter_bytes = parameter_bytes_;
    details.buffer_bytes = buffer_bytes_;
  }

 private:
  std::unordered_set<Identity> parameters_;
  std::unordered_set<Identity> buffers_;
  std::int64_t total_ = 0;
  std::int64_t trainable_ = 0;
  std::int64_t parameter_bytes_ = 0;
  std::int64_t buffer_bytes_ = 0;
};

}  // namespace vin::diagnostics
