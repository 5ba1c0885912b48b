#include "vin/diagnostics/capture/tensor_consumers.h"

#include "vin/diagnostics/capture/capture_request.h"
#include "vin/diagnostics/capture/tensor_sampling.h"
#include "vin/diagnostics/torch/dtype_names.h"

namespace vin::diagnostics {

bool NonfiniteCheck::checked_nonfinite(const at::Tensor& tensor) {
  const bool versioned = !tensor.is_inference();  // inference tensors have no version counter
  const std::int64_t version = versioned ? tensor._version() : 0;
  if (versioned)
    for (const Checked& c : recently_checked_)
      if (c.tensor.defined() && c.tensor.unsafeGetTensorImpl() == tensor.unsafeGetTensorImpl() &&
          c.version == version)
        return c.nonfinite;
  const bool nonfinite = has_nonfinite(tensor);
  if (versioned) {
    recently_checked_[next_checked_] = Checked{tensor, version, nonfinite};
    next_checked_ = (next_checked_ + 1) % recently_checked_.size();
  }
  return nonfinite;
}

void NonfiniteCheck::take(ReachedTensor& reached) {
  ++checked_tensors_;
  // a kept snapshot's statistics tell; other tensors get the check alone
  if (reached.kept) reached.stats = tensor_stats(reached.tensor);
  // (metadata-only snapshots have no statistics: nested tensors are checked all the same)
  const bool nonfinite = reached.stats && !reached.stats->entries.empty()
                             ? reached.stats->nonfinite
                             : checked_nonfinite(reached.tensor);
  if (!nonfinite) return;
  ++nonfinite_tensors_;
  if (!first_nonfinite_) first_nonfinite_ = SnapshotLocation{reached.key, reached.kept};
}

void NonfiniteCheck::summarize(CaptureSummary& summary) const {
  summary.with_stats = true;
  summary.first_nonfinite = first_nonfinite_;
  summary.checked_tensors = checked_tensors_;
  summary.nonfinite_tensors = nonfinite_tensors_;
}

void TensorSaver::take(ReachedTensor& reached) {
  if (!reached.kept) return;
  const at::Tensor& tensor = reached.tensor;
  // metadata-only tensors are not saved, nor counted as unsaved: they have no values
  if (tensor.is_nested() || tensor.layout() != c10::kStrided || tensor.is_meta()) return;
  const std::int64_t bytes = tensor.numel() * saved_element_size(tensor);
  if (saved_bytes_ + bytes > max_bytes_ ||
      static_cast<std::int64_t>(saved_.size()) >= kMaxSaveTensors) {
    ++unsaved_tensors_;
    return;
  }
  std::optional<at::Tensor> copy = whole_copy(tensor);
  if (!copy) return;
  if (!npy_descr(copy->scalar_type())) {  // LibTorch 2's uint16/32/64: no numpy type here
    ++unsaved_tensors_;
    return;
  }
  saved_bytes_ += static_cast<std::int64_t>(copy->nbytes());
  saved_.emplace_back(reached.key.name(), std::move(*copy));
}

void TensorSaver::summarize(CaptureSummary& summary) const {
  summary.saved = CaptureSummary::Saved{static_cast<std::int64_t>(saved_.size()), saved_bytes_,
                                        unsaved_tensors_};
}

}  // namespace vin::diagnostics
