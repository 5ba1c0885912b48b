// What `vin-inspect capture` asks for and gets back: plain values that cross from the binary to
// the LibTorch plugin (capture_archive runs them). Nothing here depends on LibTorch.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "vin/diagnostics/output/output_sink.h"
#include "vin/diagnostics/records/capture_records.h"
#include "vin/diagnostics/text/shape_spec.h"

namespace vin::diagnostics {

/// The most --save-max-bytes may be: an .npz is written without zip64 (under 4 GiB).
inline constexpr std::int64_t kMaxSaveBytes = 4000000000;
/// The most tensors --save writes (the zip directory's count without zip64).
/// The longest --timeout (about 115 days): the deadline must stay within the clock's range.
inline constexpr double kMaxTimeoutSeconds = 1e7;
inline constexpr std::int64_t kMaxSaveTensors = 65535;

/// How inputs made from shapes are named where an inputs file's name would be.
inline constexpr const char* kShapedInputsName = "--shape";

/// One run of an archive's forward, as capture, compare (once per archive side) and the
/// benchmarks describe it; capture/forward_runner runs it.
struct ForwardRun {
  std::string archive;              ///< TorchScript archive
  std::vector<std::string> inputs;  ///< one forward per file, in order
  /// one forward on tensors made from shapes, when given (instead of `inputs`)
  std::optional<ShapedInputs> shaped;
  /// --seed: torch.manual_seed(seed) before `shaped` is made, and the random state every
  /// forward starts from (torch/random_start.h)
  std::uint64_t seed = 0;
  std::string device = "cpu";  ///< map location of the archive and of the inputs
  /// the option that gave `device` ("--device", compare's "--device-a"), which its errors name
  std::string device_option = "--device";
  bool eval = false;           ///< switch every module to eval mode first
  /// --quantized-engine: the backend of quantized operators ("qnnpack", "fbgemm", "onednn",
  /// "x86"), as torch.backends.quantized.engine; nothing: LibTorch's default
  std::optional<std::string> quantized_engine;
  /// --timeout: the longest one forward may run, in seconds
  std::optional<double> timeout_seconds;
  /// compute each inputs file's SHA-256 as it is read (ForwardInputs::sha256): what a profile's
  /// summary names its inputs by
  bool digest_inputs = false;
};

/// What to capture.
struct CaptureRequest {
  ForwardRun run;
  /// capture --save: the .npz to write the recorded snapshots' whole tensors to, as an
  /// OutputPlan's destination (written in place; the plan puts it over its target)
  std::optional<PlannedOutput> save;
  std::int64_t save_max_bytes = std::int64_t{1} << 30;   ///< capture --save-max-bytes
  std::optional<std::vector<std::string>> module_paths;  ///< nothing: every module
  CaptureLimits limits;
  bool stats = false;  ///< compute TensorStats per snapshot (capture --stats)
  /// Called, from another thread, with what was captured so far when a forward overruns its
  /// timeout and cannot be stopped (it never reaches a module call); the process then ends with
  /// status 1. Without it such a forward ends the process with only a message.
  std::function<void(const struct CaptureResult&)> on_abandoned;
};

/// What was captured. `error` is set when a forward raised or overran its timeout: the records
/// before it are kept.
struct CaptureResult {
  std::vector<TensorSnapshot> snapshots;
  CaptureSummary summary;
  std::optional<std::string> error;  ///< one or two lines
  std::string error_report;          ///< a failed forward's whole TorchScript report (debug log)
  ForwardSources sources;            ///< which inputs file each forward's snapshots came from
};

}  // namespace vin::diagnostics
