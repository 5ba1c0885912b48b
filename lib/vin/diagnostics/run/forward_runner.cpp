#include "vin/diagnostics/run/forward_runner.h"

#include <ATen/Context.h>
#include <torch/csrc/autograd/grad_mode.h>
#include <torch/csrc/jit/runtime/graph_executor.h>
#include <torch/cuda.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <mutex>
#include <sstream>
#include <string_view>
#include <thread>
#include <utility>

#include "vin/diagnostics/records/error.h"
#include "vin/diagnostics/export/export_program.h"
#include "vin/diagnostics/formats/model_file.h"
#include "vin/diagnostics/torch/model_loader.h"

namespace vin::diagnostics {
namespace {

using Clock = std::chrono::steady_clock;

// The interpreter re-raises what an operation throws as its own error, with the text of the
// original: std::bad_alloc arrives as "std::bad_alloc".
bool out_of_memory(const std::exception& e) {
  return dynamic_cast<const std::bad_alloc*>(&e) != nullptr ||
         std::string_view(e.what()).find("std::bad_alloc") != std::string_view::npos;
}

std::string seconds_text(double seconds) {
  std::ostringstream text;
  text << seconds;
  return text.str();
}

std::string past_timeout(const ForwardRun& run, const std::string& inputs) {
  return run.archive + ": the forward on " + inputs + " did not finish within " +
         seconds_text(*run.timeout_seconds) + " s (--timeout)";
}

// Stops nothing itself: a forward past its deadline is stopped by the capture's observer at its
// next module call. One that reaches none (a long single operation, a loop without module calls)
// cannot be interrupted inside LibTorch, so a second after the deadline the watchdog hands the
// message to on_abandoned and ends the process.
class Watchdog {
 public:
  Watchdog(const ForwardRun& run, const OnAbandoned& on_abandoned)
      : run_(run), on_abandoned_(on_abandoned), thread_([this] { watch(); }) {}
  ~Watchdog() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      done_ = true;
    }
    wake_.notify_all();
    thread_.join();
  }
  Watchdog(const Watchdog&) = delete;
  Watchdog& operator=(const Watchdog&) = delete;

  void arm(Clock::time_point deadline, std::string inputs) {
    std::lock_guard<std::mutex> lock(mutex_);
    deadline_ = deadline;
    inputs_ = std::move(inputs);
    wake_.notify_all();
  }
  void disarm() {
    std::lock_guard<std::mutex> lock(mutex_);
    deadline_.reset();
  }

 private:
  void watch() {
    std::unique_lock<std::mutex> lock(mutex_);
    while (!done_) {
      if (!deadline_) {
        wake_.wait(lock);
        continue;
      }
      const Clock::time_point give_up = *deadline_ + std::chrono::seconds(1);
      if (Clock::now() < give_up) {
        wake_.wait_until(lock, give_up);
        continue;
      }
      abandon();
    }
  }

  [[noreturn]] void abandon() {
    if (on_abandoned_)
      on_abandoned_(past_timeout(run_, inputs_) + " and could not be stopped at a module call");
    std::_Exit(1);
  }

  const ForwardRun& run_;
  const OnAbandoned& on_abandoned_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::optional<Clock::time_point> deadline_;
  std::string inputs_;
  bool done_ = false;
  std::thread thread_;  // last: starts once everything above exists
};

// The one message of a forward that did not finish (the archive, the inputs, why).
RunFailure describe_failure(const ForwardRun& run, const std::string& inputs,
                            const std::exception& e, bool timed_out) {
  if (timed_out) return {past_timeout(run, inputs) + "; it was stopped at a module call", ""};
  if (out_of_memory(e))
    return {run.archive + ": out of memory while running the forward on " + inputs, ""};
  const ForwardFailure failure = describe_forward_failure(e);
  RunFailure out{run.archive + ": the model's forward raised on " + inputs + ": " + failure.reason,
                 failure.report, /*raised=*/true};
  if (!failure.where.empty()) out.message += "\n  at " + failure.where;
  // --device meta runs only the operators this LibTorch has a meta kernel for (1.13 has none
  // for relu or conv2d; newer releases have many more)
  if (failure.reason.find("from the 'Meta' backend") != std::string::npos)
    out.message +=
        "\n  hint: this LibTorch has no meta kernel for that operator; run on cpu "
        "(or a LibTorch with one)";
  return out;
}

}  // namespace

void synchronize_device(const c10::Device& device) {
  if (device.is_cuda()) torch::cuda::synchronize(device.has_index() ? device.index() : -1);
}

void select_quantized_engine(const std::string& name) {
  static const std::pair<const char*, at::QEngine> engines[] = {{"fbgemm", at::QEngine::FBGEMM},
                                                                {"qnnpack", at::QEngine::QNNPACK},
                                                                {"onednn", at::QEngine::ONEDNN},
                                                                {"x86", at::QEngine::X86}};
  // compare loads its two archives on two threads: one engine, set once at a time
  static std::mutex selecting;
  std::lock_guard<std::mutex> lock(selecting);
  std::string supported;
  for (const auto& [engine_name, engine] : engines) {
    const auto& available = at::globalContext().supportedQEngines();
    if (std::find(available.begin(), available.end(), engine) == available.end()) continue;
    if (name == engine_name) {
      at::globalContext().setQEngine(engine);
      return;
    }
    supported += (supported.empty() ? "" : ", ") + std::string(engine_name);
  }
  throw UsageError("--quantized-engine " + name + " is not available in this LibTorch build " +
                   "(available: " + supported + ")");
}

LoadedRun::LoadedRun(const ForwardRun& run, const std::function<void(const char*)>& on_stage,
                     const ArchiveLayout* probed, bool programs)
    : run_(run),
      device_(resolve_device(run.device, run.device_option)),
      input_names_(run.inputs),
      random_start_(run.seed) {
  // before the load: its packed parameters are packed for the engine in force at __setstate__
  if (run_.quantized_engine) select_quantized_engine(*run_.quantized_engine);
  std::optional<ForwardSchema> schema;
  if (!probed && programs) {
    // a .pt2 for the interpreter, or a TorchScript archive
    const ClassifiedFile file = naming_out_of_memory(run_.archive, "reading the archive", [&] {
      return open_model_file(run_.archive, kRun | kRunProgram, "a model file");
    });
    if (is_export_program(file)) {
      program_ = naming_out_of_memory(run_.archive, "loading the program", [&] {
        return std::make_unique<export_run::ProgramRunner>(*file.zip, read_export_program(*file.zip),
                                                           device_);
      });
      program_forward_ = std::make_unique<ProgramForward>(*program_);
      schema = program_forward_->schema();
    } else {
      model_ = naming_out_of_memory(run_.archive, "loading the archive", [&] {
        return load_torchscript_archive(open_torchscript_archive(file), run_.device);
      });
    }
  } else {
    model_ = naming_out_of_memory(run_.archive, "loading the archive", [&] {
      return probed ? load_torchscript_archive(*probed, run_.device)
                    : load_torchscript_archive(run_.archive, run_.device);
    });
  }
  if (on_stage) on_stage("loaded the archive");
  if (!schema) {
    if (run_.eval) model_.eval();
    schema = forward_schema(model_);
  }
  // every inputs file is read before anything runs: a bad file fails fast
  for (const auto& path : run_.inputs)
    inputs_.push_back(naming_out_of_memory(
        path, "reading the inputs",
        [&] { return read_forward_inputs(path, *schema, device_, run_.digest_inputs); }));
  if (run_.shaped) {
    inputs_.push_back(naming_out_of_memory(kShapedInputsName, "making the tensors", [&] {
      return make_shaped_inputs(*run_.shaped, random_start_.generator(), *schema, device_);
    }));
    input_names_.push_back(kShapedInputsName);
  }
  if (on_stage) on_stage("read the inputs");
}

LoadedRun::~LoadedRun() = default;

std::optional<RunFailure> run_forwards(LoadedRun& loaded, const ForwardStep& step,
                                       StoppableForward* stoppable, const OnAbandoned& on_abandoned,
                                       GraphOptimisation optimisation) {
  const ForwardRun& run = loaded.run();
  at::NoGradGuard no_grad;
  torch::jit::GraphOptimizerEnabledGuard graph_optimisation(
      optimisation == GraphOptimisation::as_configured && torch::jit::getGraphExecutorOptimize());
  std::optional<Watchdog> watchdog;
  if (run.timeout_seconds) watchdog.emplace(run, on_abandoned);
  for (std::size_t i = 0; i < loaded.inputs().size(); ++i) {
    const std::string& name = loaded.input_names()[i];
    if (watchdog) {
      const auto deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                               std::chrono::duration<double>(*run.timeout_seconds));
      if (stoppable) stoppable->set_deadline(deadline);
      watchdog->arm(deadline, name);
    }
    try {
      loaded.random_start().apply(loaded.device());
      step(i);
    } catch (const std::exception& e) {
      if (watchdog) watchdog->disarm();
      return describe_failure(run, name, e, stoppable && stoppable->timed_out());
    }
    if (watchdog) watchdog->disarm();
  }
  return std::nullopt;
}

}  // namespace vin::diagnostics
