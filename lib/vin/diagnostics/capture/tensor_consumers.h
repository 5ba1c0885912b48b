// What a capture does with the tensors its walks reach, besides keeping snapshots within the
// quotas: each consumer here takes every reached tensor in turn (ModelCapture::add_consumer),
// so a command adds its own (profile's ProfileRecorder) without touching the others.
#pragma once

#include <ATen/core/Tensor.h>

#include <array>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "vin/diagnostics/records/capture_records.h"

namespace vin::diagnostics {

/// A tensor a walk reached, as the consumers see it one after the other.
struct ReachedTensor {
  const TensorKey& key;
  const at::Tensor& tensor;  ///< defined
  /// The capture keeps a snapshot of it (it is within the snapshot quotas).
  bool kept = false;
  /// What that snapshot reports as its statistics (NonfiniteCheck fills it for kept tensors).
  std::optional<TensorStats> stats;
};

/// One consumer of reached tensors. Its methods are called with the capture's lock held.
class TensorConsumer {
 public:
  virtual ~TensorConsumer() = default;
  /// Whether the walks must go on past the snapshot quotas for it (it wants every tensor).
  virtual bool wants_every_tensor() const { return false; }
  /// Whether the capture keeps no snapshots once it is added (it has every tensor instead).
  virtual bool replaces_snapshots() const { return false; }
  /// One tensor, in capture order.
  virtual void take(ReachedTensor& reached) = 0;
  /// A call of a selected module has begun (its arguments were walked: their tensors came
  /// first), or has returned (its output was walked). The calls nest as the forward made them,
  /// per thread; `call_index` is the call's (as TensorKey's).
  virtual void call_begun(const std::string& module_path, std::int64_t call_index) {
    (void)module_path, (void)call_index;
  }
  virtual void call_returned(const std::string& module_path, std::int64_t call_index) {
    (void)module_path, (void)call_index;
  }
  /// Adds what it counted to the capture's summary record.
  virtual void summarize(CaptureSummary& summary) const { (void)summary; }
  /// The capture was closed: references to tensors are dropped.
  virtual void close() {}
};

/// capture --stats: statistics for every kept snapshot, and every reached tensor checked for
/// NaN and infinity (the first one's location, how many were checked and held one).
class NonfiniteCheck final : public TensorConsumer {
 public:
  bool wants_every_tensor() const override { return true; }
  void take(ReachedTensor& reached) override;
  void summarize(CaptureSummary& summary) const override;
  void close() override { recently_checked_ = {}; }

 private:
  // has_nonfinite, remembered for the last few tensors: one module's output is the next one's
  // input (and its parent's), so most tensors are met several times, unchanged in between (the
  // version counter says so). The references kept delay freeing those few tensors a little.
  bool checked_nonfinite(const at::Tensor& tensor);
  struct Checked {
    at::Tensor tensor;
    std::int64_t version = 0;
    bool nonfinite = false;
  };
  std::array<Checked, 8> recently_checked_;
  std::size_t next_checked_ = 0;
  std::optional<SnapshotLocation> first_nonfinite_;
  std::int64_t checked_tensors_ = 0;
  std::int64_t nonfinite_tensors_ = 0;
};

/// capture --save: a whole_copy of every kept snapshot's tensor, while their bytes stay within
/// `max_bytes` (and their count within kMaxSaveTensors), each named TensorKey::name().
class TensorSaver final : public TensorConsumer {
 public:
  explicit TensorSaver(std::int64_t max_bytes) : max_bytes_(max_bytes) {}
  void take(ReachedTensor& reached) override;
  void summarize(CaptureSummary& summary) const override;
  const std::vector<std::pair<std::string, at::Tensor>>& saved() const { return saved_; }

 private:
  std::int64_t max_bytes_;
  std::vector<std::pair<std::string, at::Tensor>> saved_;
  std::int64_t saved_bytes_ = 0;
  std::int64_t unsaved_tensors_ = 0;
};

/// compare: every reached tensor, whole, to a function (the capture keeps no snapshot then).
class TensorForwarder final : public TensorConsumer {
 public:
  using Sink = std::function<void(const TensorKey&, const at::Tensor&)>;
  explicit TensorForwarder(Sink sink) : sink_(std::move(sink)) {}
  bool wants_every_tensor() const override { return true; }
  bool replaces_snapshots() const override { return true; }
  void take(ReachedTensor& reached) override { sink_(reached.key, reached.tensor); }

 private:
  Sink sink_;
};

}  // namespace vin::diagnostics
