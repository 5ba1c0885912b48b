// Records of numerical capture (CaptureLimits and TensorSnapshot, and the command
// line's CaptureSummary). Plain immutable values; nothing here depends on LibTorch.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

namespace vin::diagnostics {

/// The quotas of a capture by name, with their defaults (docs/capture.md): the one place they are
/// written.
struct CaptureQuotas {
  std::int64_t max_tensors = 64;             ///< snapshots retained across the capture
  std::int64_t max_samples_per_tensor = 32;  ///< row-major elements copied from one tensor
  std::int64_t max_bytes = 16 * 1024;        ///< source-dtype bytes copied across the capture
  std::int64_t max_traversal_nodes = 4096;   ///< nodes visited in one input or output walk
  std::int64_t max_container_depth = 32;     ///< container edges followed from a walk's root
};

/// Positive quotas for one ModelCapture. Tensor-count and byte quotas are cumulative across every
/// forward and every entrance of the capture; traversal quotas restart for each input walk and
/// each output walk. Built by name: `CaptureLimits().with_max_tensors(8).with_max_bytes(1024)`.
class CaptureLimits {
 public:
  /// The defaults (CaptureQuotas).
  CaptureLimits() = default;
  /// Throws UsageError naming the first quota that is not positive.
  explicit CaptureLimits(const CaptureQuotas& quotas);

  /// A copy with one quota changed; throws UsageError when it is not positive.
  CaptureLimits with_max_tensors(std::int64_t n) const;
  CaptureLimits with_max_samples_per_tensor(std::int64_t n) const;
  CaptureLimits with_max_bytes(std::int64_t n) const;
  CaptureLimits with_max_traversal_nodes(std::int64_t n) const;
  CaptureLimits with_max_container_depth(std::int64_t n) const;

  /// Maximum tensor snapshots retained across the capture.
  std::int64_t max_tensors() const { return q_.max_tensors; }
  /// Maximum row-major flattened elements copied from one tensor.
  std::int64_t max_samples_per_tensor() const { return q_.max_samples_per_tensor; }
  /// Maximum source-dtype bytes copied into samples across the capture.
  std::int64_t max_bytes() const { return q_.max_bytes; }
  /// Maximum containers, leaves and tensors visited in one input or output walk.
  std::int64_t max_traversal_nodes() const { return q_.max_traversal_nodes; }
  /// Maximum container edges followed from an input or output root.
  std::int64_t max_container_depth() const { return q_.max_container_depth; }

  friend bool operator==(const CaptureLimits& a, const CaptureLimits& b) {
    return a.max_tensors() == b.max_tensors() &&
           a.max_samples_per_tensor() == b.max_samples_per_tensor() &&
           a.max_bytes() == b.max_bytes() && a.max_traversal_nodes() == b.max_traversal_nodes() &&
           a.max_container_depth() == b.max_container_depth();
  }

 private:
  CaptureLimits with(std::int64_t CaptureQuotas::*quota, std::int64_t n) const;
  CaptureQuotas q_;
};

/// One sampled element: integers (exact), floating values (the element's exact double), bools.
using SampleValue = std::variant<std::int64_t, double, bool>;

/// Which side of an invocation a snapshot observed.
enum class Direction { input, output };

/// A statistic: an integer count or value, a float (non-finite ones print as strings), or null.
using StatValue = std::variant<std::nullptr_t, std::int64_t, double>;

/// `capture --stats`: statistics over a whole tensor, in a fixed order per dtype kind (floating:
/// min, max, mean, std, abs_max, nan_count, inf_count, zero_count; integer: min, max, mean,
/// zero_count; bool: true_count). No entries for a metadata-only tensor.
struct TensorStats {
  std::vector<std::pair<std::string, StatValue>> entries;
  bool nonfinite = false;  ///< the tensor holds a NaN or an infinity
};

/// Complete source metadata plus a detached, bounded value sample of one tensor.
class TensorSnapshot {
 public:
  TensorSnapshot(std::string module_path, std::int64_t call_index, Direction direction,
                 std::vector<std::string> tensor_path, std::vector<std::int64_t> shape,
                 std::string dtype, std::string device, std::int64_t numel,
                 std::int64_t sampled_bytes, std::vector<SampleValue> values,
                 std::optional<std::string> sample_omission_reason,
                 std::optional<TensorStats> stats = std::nullopt)
      : module_path_(std::move(module_path)),
        call_index_(call_index),
        direction_(direction),
        tensor_path_(std::move(tensor_path)),
        shape_(std::move(shape)),
        dtype_(std::move(dtype)),
        device_(std::move(device)),
        numel_(numel),
        sampled_bytes_(sampled_bytes),
        values_(std::move(values)),
        sample_omission_reason_(std::move(sample_omission_reason)),
        stats_(std::move(stats)) {}

  /// Registered module path, "<root>" for the model root.
  const std::string& module_path() const { return module_path_; }
  /// Zero-based invocation index of module_path in this capture; input and output share it.
  std::int64_t call_index() const { return call_index_; }
  /// The side observed.
  Direction direction() const { return direction_; }
  /// Container path from "args"/"kwargs" or "output" down to the tensor.
  const std::vector<std::string>& tensor_path() const { return tensor_path_; }
  /// The full tensor's shape at observation time.
  const std::vector<std::int64_t>& shape() const { return shape_; }
  /// Python's str(dtype), e.g. "torch.float32".
  const std::string& dtype() const { return dtype_; }
  /// Python's str(device) of the source tensor, e.g. "cpu", "cuda:0".
  const std::string& device() const { return device_; }
  /// Elements in the full tensor.
  std::int64_t numel() const { return numel_; }
  /// Source-dtype bytes represented by values.
  std::int64_t sampled_bytes() const { return sampled_bytes_; }
  /// Row-major prefix of the tensor's logical elements, copied to the CPU.
  const std::vector<SampleValue>& values() const { return values_; }
  /// Why values were not sampled ("non_strided_layout", "meta_device", "quantized_dtype",
  /// "complex_dtype"); empty for sampled and for empty tensors.
  const std::optional<std::string>& sample_omission_reason() const {
    return sample_omission_reason_;
  }

  /// Statistics over the whole tensor when captured with stats (not a seed field).
  const std::optional<TensorStats>& stats() const { return stats_; }

  friend bool operator==(const TensorSnapshot& a, const TensorSnapshot& b);
  friend bool operator!=(const TensorSnapshot& a, const TensorSnapshot& b) { return !(a == b); }

 private:
  std::string module_path_;
  std::int64_t call_index_;
  Direction direction_;
  std::vector<std::string> tensor_path_;
  std::vector<std::int64_t> shape_;
  std::string dtype_;
  std::string device_;
  std::int64_t numel_;
  std::int64_t sampled_bytes_;
  std::vector<SampleValue> values_;
  std::optional<std::string> sample_omission_reason_;
  std::optional<TensorStats> stats_;
};

/// Where the first non-finite tensor was seen (capture --stats).
/// Where a tensor was seen: the module call, the side of it and the path inside the value. The
/// one key of a recorded tensor: snapshots' fields, --save's member names, compare's pairs,
/// first_nonfinite.
struct TensorKey {
  std::string module_path;
  std::int64_t call_index = 0;
  Direction direction = Direction::input;
  std::vector<std::string> tensor_path;

  /// `MODULE_PATH/CALL_INDEX/DIRECTION/TENSOR_PATH...`: the name capture --save gives it.
  std::string name() const;
  /// The key of a capture --save member name; nothing for a name of another form.
  static std::optional<TensorKey> from_name(const std::string& name);
};

/// A tensor's key and whether a snapshot of it was kept (first_nonfinite).
struct SnapshotLocation : TensorKey {
  bool recorded =
      false;  ///< whether a snapshot of this tensor exists (quotas may have stopped them)
};

/// The closing record of `vin-inspect capture`.
struct CaptureSummary {
  std::int64_t snapshots = 0;             ///< number of snapshots
  std::int64_t sampled_bytes = 0;         ///< their sampled bytes in total
  std::optional<std::string> stopped_by;  ///< "max_tensors", "max_bytes", or empty
  bool with_stats = false;                ///< captured with stats: the fields below are reported
  /// the first tensor, in capture order, holding a NaN or an infinity
  std::optional<SnapshotLocation> first_nonfinite;
  std::int64_t checked_tensors = 0;    ///< tensors the walks reached and checked
  std::int64_t nonfinite_tensors = 0;  ///< of those, how many held a NaN or an infinity
  /// capture --save: the tensors written to the .npz, their bytes, and the recorded tensors
  /// left out by --save-max-bytes
  struct Saved {
    std::int64_t tensors = 0;
    std::int64_t bytes = 0;
    std::int64_t unsaved = 0;
  };
  std::optional<Saved> saved;
  /// --seed: the random state every forward started from (printed when not 0: the seed's
  /// record keeps its three fields on a default run)
  std::uint64_t seed = 0;
  /// what ran the forward where it was not LibTorch's TorchScript interpreter: "export_graph"
  /// for a .pt2 (contract 12.2); printed only then (a TorchScript capture keeps the seed API's
  /// fields)
  std::optional<std::string> runner;
};

/// Which inputs file each forward of a capture ran on, for people (the table's Input column):
/// forward i ran on `files[i]` and produced the snapshots before `ends[i]`.
struct ForwardSources {
  std::vector<std::string> files;
  std::vector<std::size_t> ends;
};

/// "input" or "output".
const char* to_string(Direction direction);

}  // namespace vin::diagnostics
