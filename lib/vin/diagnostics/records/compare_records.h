// The records of `vin-inspect compare` (TensorComparison, ComparisonSummary; docs/records.md),
// keyed by capture's TensorKey. Plain values; nothing here depends on LibTorch.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "vin/diagnostics/records/capture_records.h"

namespace vin::diagnostics {

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
  /// B's tensor_path where the pair was made by position among its call's tensors and B's path
  /// differs from A's (a .pt against a .pt2 whose call gives another structure)
  std::optional<std::vector<std::string>> tensor_path_b;
  /// a one-sided tensor of a call whose tensors could not be paired between a .pt and a .pt2
  /// (different counts, or a call one side does not make): a structure difference, not a
  /// divergence
  bool structure_differs = false;
};

/// The closing record of a comparison.
struct ComparisonSummary {
  std::int64_t pairs = 0;  ///< tensors on both sides
  std::int64_t within = 0;
  std::int64_t beyond = 0;
  std::int64_t only_in_a = 0;  ///< one-sided tensors, structure differences left out
  std::int64_t only_in_b = 0;
  /// calls and directions (a call's inputs, its output) of a .pt and a .pt2 whose tensors could
  /// not be paired
  std::int64_t structure_differences = 0;
  std::optional<TensorKey> first_divergence;  ///< the first pair beyond tolerance, in A's order
  std::optional<double> atol;                 ///< --atol, or null for the per-dtype defaults
  std::optional<double> rtol;
  std::int64_t statistics_only = 0;  ///< pairs compared by statistics only
  std::uint64_t seed = 0;            ///< --seed: both sides' forwards started from it
};

/// What was compared: the records in order (A's capture order, then B's one-sided tensors), the
/// summary; `error` when a side could not be run to the end (a forward raised).
struct CompareResult {
  std::vector<TensorComparison> comparisons;
  ComparisonSummary summary;
  std::optional<std::string> error;
};

}  // namespace vin::diagnostics
