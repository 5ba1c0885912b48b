// What `vin-inspect compare` asks the plugin for and gets back (compare_sides runs it): plain
// values that cross from the binary to the LibTorch plugin. Nothing here depends on LibTorch.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "vin/diagnostics/capture/capture_request.h"
#include "vin/diagnostics/records/compare_records.h"

namespace vin::diagnostics {

/// One side of a comparison: a TorchScript archive to run, or a file of saved tensors
/// (capture --save, scripts/eager_capture.py); compare_sides tells which (classify_file).
struct CompareSide {
  std::string path;
  std::string device = "cpu";
};

/// What to compare.
struct CompareRequest {
  CompareSide a, b;
  /// How each archive side runs: its inputs files (one forward per file) or `--shape` inputs
  /// (one of them when a side is an archive), eval, quantized engine and timeout; the archive
  /// and device are each side's (run_of).
  ForwardRun run;
  std::optional<std::vector<std::string>> module_paths;  ///< patterns; nothing: every module
  std::int64_t max_traversal_nodes = CaptureQuotas{}.max_traversal_nodes;
  std::int64_t max_container_depth = CaptureQuotas{}.max_container_depth;
  std::optional<double> atol, rtol;  ///< nothing: torch.testing's defaults per dtype
  bool equal_nan = false;
  /// A's tensors kept whole up to this many bytes; past it, by their statistics
  std::int64_t max_compare_bytes = std::int64_t{4} << 30;
  /// Called, from another thread, with the message of a forward past its timeout that cannot
  /// be stopped at a module call; the process then ends (status 1 unless this ends it first).
  std::function<void(const std::string& message)> on_abandoned;

  /// The run of one archive side: `run` with the side's path and device.
  ForwardRun run_of(const CompareSide& side) const {
    ForwardRun side_run = run;
    side_run.archive = side.path;
    side_run.device = side.device;
    side_run.device_option = &side == &b ? "--device-b" : "--device-a";
    return side_run;
  }
};

}  // namespace vin::diagnostics
