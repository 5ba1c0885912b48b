// What `vin-inspect profile` asks for and gets back (contract 8): plain values that cross from the
// binary to the LibTorch plugin (profile_archive runs them). Nothing here depends on LibTorch.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "vin/diagnostics/capture/capture_request.h"
#include "vin/diagnostics/records/profile_records.h"

namespace vin::diagnostics {

/// The most --warmup and --runs may be (each forward's time is kept).
inline constexpr std::int64_t kMaxProfileRuns = 1000000;

/// The most --threads may be.
inline constexpr std::int64_t kMaxProfileThreads = 1024;

/// The phases of a profile, as its progress reports them.
enum class ProfilePhase { warmup, timed };

/// What to profile.
struct ProfileRequest {
  /// The archive and its inputs: one inputs file, or one set of --shape tensors.
  ForwardRun run;
  std::optional<std::vector<std::string>> module_paths;  ///< --module; nothing: every module
  std::int64_t warmup = 3;                               ///< forwards run first, not measured
  std::int64_t runs = 10;                                ///< timed forwards (at least 1)
  /// --threads: LibTorch's intra-op threads for every forward; nothing: LibTorch's own choice
  std::optional<std::int64_t> threads;
  bool trace = false;  ///< keep the spans of the forwards and the memory samples (--trace)
  /// --nested-operators: OperatorProfile records of every operator call, not only the outermost
  bool nested_operators = false;
  /// Hears each warm-up and timed forward as it finishes: the phase, how many of it are done,
  /// of how many (the binary's progress line). Called on the thread that runs the forwards.
  std::function<void(ProfilePhase phase, std::int64_t done, std::int64_t total)> on_progress;
  /// Called, from another thread, with the message of a forward that overruns --timeout and
  /// cannot be stopped; the process then ends with status 1.
  std::function<void(const std::string& message)> on_abandoned;
};

/// What a profile measured. `error` is set when a forward raised or overran its timeout: nothing
/// else is then meaningful.
struct ProfileResult {
  ProfileRecords records;
  /// when asked (trace): the warm-up and timed forwards, the instrumented forward and its module
  /// and operator calls, times from the first forward's start
  std::vector<ProfileSpan> spans;
  std::vector<MemorySample> memory;  ///< the instrumented forward's live bytes, when asked
  std::optional<std::string> error;  ///< one or two lines
  std::string error_report;          ///< a failed forward's whole TorchScript report (debug log)
  /// The loaded model and its instrumented clone, handed over rather than destroyed on return:
  /// dropping this destroys them (0.45 s for a model of 5,000 modules), which a caller about to
  /// end its process may leave to the exit.
  std::shared_ptr<void> models;
};

}  // namespace vin::diagnostics
