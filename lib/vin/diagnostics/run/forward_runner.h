// The one way an archive's forward is run here (capture, compare, profile, the benchmarks):
// a ForwardRun (records/capture_request.h) loaded and its inputs read before anything runs
// (LoadedRun), then each forward run under the same guards and the same watchdog, with the
// one failure message (run_forwards). What a forward records is the caller's business: the
// step it passes decides how each input is run (through a ModelCapture, or plainly).
#pragma once

#include <torch/csrc/jit/api/module.h>

#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "vin/diagnostics/torchscript/archive_layout.h"
#include "vin/diagnostics/capture/capture_request.h"
#include "vin/diagnostics/run/stoppable_forward.h"
#include "vin/diagnostics/run/forward_inputs.h"
#include "vin/diagnostics/run/program_forward.h"
#include "vin/diagnostics/run/random_start.h"

namespace vin::diagnostics {

/// An archive loaded for one run, with every input read: the quantized engine is selected
/// before the load (packed parameters are packed for the engine in force), the modules are
/// switched to eval mode when the run asks, and running out of memory while loading or reading
/// names the stage. Throws Error for an unreadable archive or inputs file, UsageError for a bad
/// device, an unavailable quantized engine or inputs that do not fit forward.
class LoadedRun {
 public:
  /// `on_stage`, when given, hears "loaded the archive" and "read the inputs" as each is done
  /// (capture's --log-level debug timings). `probed`: the run's archive opened and probed
  /// already (compare told its sides apart that way); else the archive is opened here.
  /// `programs`: a torch.export archive is loaded too, for the .pt2 interpreter (capture);
  /// without, it is refused as a file the command does not run.
  explicit LoadedRun(const ForwardRun& run,
                     const std::function<void(const char* stage)>& on_stage = {},
                     const ArchiveLayout* probed = nullptr, bool programs = false);
  ~LoadedRun();

  const ForwardRun& run() const { return run_; }
  /// The TorchScript module (none where program() is set).
  torch::jit::Module& model() { return model_; }
  /// The exported program the run runs instead of a TorchScript module, or nullptr.
  export_run::ProgramRunner* program() { return program_.get(); }
  /// How its forward is called (set with program()).
  const ProgramForward* program_forward() const { return program_forward_.get(); }
  const c10::Device& device() const { return device_; }
  /// One per forward, in order: the inputs files, then the `--shape` inputs.
  std::vector<ForwardInputs>& inputs() { return inputs_; }
  /// What each forward's inputs are called in messages and records: the file, or `--shape`.
  const std::vector<std::string>& input_names() const { return input_names_; }
  /// The random state each forward starts from (--seed; run_forwards applies it).
  RandomStart& random_start() { return random_start_; }

 private:
  ForwardRun run_;
  c10::Device device_;
  torch::jit::Module model_;
  std::unique_ptr<export_run::ProgramRunner> program_;
  std::unique_ptr<ProgramForward> program_forward_;
  std::vector<ForwardInputs> inputs_;
  std::vector<std::string> input_names_;
  RandomStart random_start_;
};

/// Why the forwards stopped: one or two lines naming the archive and the inputs (ran past
/// --timeout, out of memory, or raised with LibTorch's reason and where), and a raised
/// forward's whole TorchScript report (for the debug log).
struct RunFailure {
  std::string message;
  std::string report;
  /// the forward raised an error of its own (not a timeout, not running out of memory): running
  /// it again, instrumented, reaches the same error (profile does, to say where it raised)
  bool raised = false;
};

/// How run_forwards runs forward `i` (of run.inputs()); what it throws ends the run.
using ForwardStep = std::function<void(std::size_t i)>;
/// Called from the watchdog's thread with the message of a forward that ran a second past its
/// deadline without reaching a module call (it cannot be interrupted inside LibTorch); the
/// process then ends with status 1 unless the callback ended it first.
using OnAbandoned = std::function<void(const std::string& message)>;

/// Whether run_forwards turns the graph executor's optimisation off: it would spend the first
/// call optimising for calls that never come (capture, compare, profile's instrumented forward),
/// or leaves it as LibTorch has it for any user (profile's warm-up and timed forwards).
enum class GraphOptimisation { off, as_configured };

/// Runs `step` for each of the run's inputs in order, each from the run's random start
/// (contract 9.2), without autograd and with the graph
/// executor's optimisation as `optimisation` says (restored on return), each under the run's
/// --timeout. `stoppable`: the capture (a ModelCapture) whose
/// observers stop a forward past its deadline at the next module call; without one (or when no
/// module call comes) a forward past its deadline is abandoned (`on_abandoned`). Returns the
/// failure of the first forward that did not finish; the later ones are not run.
std::optional<RunFailure> run_forwards(LoadedRun& run, const ForwardStep& step,
                                       StoppableForward* stoppable, const OnAbandoned& on_abandoned,
                                       GraphOptimisation optimisation = GraphOptimisation::off);

/// Waits until the kernels queued on `device` have run, when it is a CUDA device (their calls
/// return once queued); does nothing for others. A device without an index: the current one.
void synchronize_device(const c10::Device& device);

/// Selects the quantized backend by name, as torch.backends.quantized.engine does; throws
/// UsageError naming the ones this LibTorch build has when it lacks `name`.
void select_quantized_engine(const std::string& name);

}  // namespace vin::diagnostics
