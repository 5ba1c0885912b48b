// The records of `vin-inspect compare` (TensorComparison, ComparisonSummary; docs/records.md) and
// what the binary asks the plugin for. Plain values; nothing here depends on LibTorch.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "vin/diagnostics/records/capture_records.h"
#include "vin/diagnostics/records/capture_request.h"

namespace vin::diagnostics {

/// Where a tensor was seen: the keys that pair A's tensors with B's.
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

/// One paired (or one-sided) tensor.
struct TensorComparison {
  TensorKey key;
  std::optional<std::vector<std::int64_t>> shape_a, shape_b;  ///< null on the side it is not on
  std::optional<std::string> dtype_a, dtype_b;                ///< Python's str(dtype)
  std::int64_t numel = 0;                                     ///< A's (B's when only in B)
  std::optional<double> max_abs_error;  ///< null when not compared (one-sided, shapes differ)
  std::optional<double> max_rel_error;
  std::optional<std::int64_t> mismatches;  ///< elements not isclose; null by statistics only
  double atol = 0;
  double rtol = 0;
  bool within_tolerance = false;
  std::optional<std::string> only_in;  ///< "a" or "b" for a one-sided tensor
  /// compared by statistics (min, max, mean) only: A's tensors past --max-compare-bytes
  bool statistics_only = false;
};

/// The closing record of a comparison.
struct ComparisonSummary {
  std::int64_t pairs = 0;  ///< tensors on both sides
  std::int64_t within = 0;
  std::int64_t beyond = 0;
  std::int64_t only_in_a = 0;
  std::int64_t only_in_b = 0;
  std::optional<TensorKey> first_divergence;  ///< the first pair beyond tolerance, in A's order
  std::optional<double> atol;                 ///< --atol, or null for the per-dtype defaults
  std::optional<double> rtol;
  std::int64_t statistics_only = 0;  ///< pairs compared by statistics only
};

/// One side of a comparison: a TorchScript archive to run, or a file of saved tensors
/// (capture --save, scripts/eager_capture.py).
struct CompareSide {
  std::string path;
  bool archive = true;
  std::string device = "cpu";
};

/// What to compare.
struct CompareRequest {
  CompareSide a, b;
  std::vector<std::string> inputs;     ///< one forward per file, on each archive side
  std::optional<ShapedInputs> shaped;  ///< instead of inputs
  std::optional<std::vector<std::string>> module_paths;  ///< patterns; nothing: every module
  std::int64_t max_traversal_nodes = CaptureQuotas{}.max_traversal_nodes;
  std::int64_t max_container_depth = CaptureQuotas{}.max_container_depth;
  std::optional<double> atol, rtol;  ///< nothing: torch.testing's defaults per dtype
  bool equal_nan = false;
  bool eval = false;
  std::optional<std::string> quantized_engine;  ///< as capture's, for both archive sides
  std::optional<double> timeout_seconds;        ///< as capture's, for each forward of each side
  /// A's tensors kept whole up to this many bytes; past it, by their statistics
  std::int64_t max_compare_bytes = std::int64_t{4} << 30;
  /// Called, from another thread, with the message of a forward past its timeout that cannot
  /// be stopped at a module call; the process then ends (status 1 unless this ends it first).
  std::function<void(const std::string& message)> on_abandoned;

  /// The run of one archive side: its path and device, the request's inputs and settings.
  ForwardRun run_of(const CompareSide& side) const {
    ForwardRun run;
    run.archive = side.path;
    run.device = side.device;
    run.inputs = inputs;
    run.shaped = shaped;
    run.eval = eval;
    run.quantized_engine = quantized_engine;
    run.timeout_seconds = timeout_seconds;
    return run;
  }
};

/// What was compared: the records in order (A's capture order, then B's one-sided tensors), the
/// summary; `error` when a side could not be run to the end (a forward raised).
struct CompareResult {
  std::vector<TensorComparison> comparisons;
  ComparisonSummary summary;
  std::optional<std::string> error;
};

}  // namespace vin::diagnostics
