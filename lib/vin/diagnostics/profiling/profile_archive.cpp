#include "vin/diagnostics/profiling/profile_archive.h"

#include <ATen/Functions.h>
#include <ATen/Parallel.h>
#include <torch/version.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <mutex>
#include <optional>
#include <thread>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "vin/diagnostics/run/forward_runner.h"
#include "vin/diagnostics/capture/model_capture.h"
#include "vin/diagnostics/capture/program_capture.h"
#include "vin/diagnostics/capture/tensor_sampling.h"
#include "vin/diagnostics/profile/latency.h"
#include "vin/diagnostics/profile/profile_builder.h"
#include "vin/diagnostics/profiling/instrumented_forward.h"
#include "vin/diagnostics/profiling/operator_events.h"
#include "vin/diagnostics/profiling/profile_recorder.h"
#include "vin/diagnostics/records/error.h"
#include "vin/diagnostics/plugin/log_sink.h"
#include "vin/diagnostics/records/model_metadata.h"
#include "vin/diagnostics/text/module_selection.h"
#include "vin/diagnostics/torch/device_name.h"
#include "vin/diagnostics/torch/inspect_model.h"
#include "vin/diagnostics/torch/model_loader.h"

namespace vin::diagnostics {
namespace {

using namespace profiling;

// Bytes of the distinct tensors of `tensors` (a tied weight once).
template <class Tensors>
std::int64_t distinct_bytes(const Tensors& tensors) {
  std::unordered_set<const c10::TensorImpl*> seen;
  std::int64_t bytes = 0;
  for (const at::Tensor& t : tensors)
    if (t.defined() && seen.insert(t.unsafeGetTensorImpl()).second)
      bytes += static_cast<std::int64_t>(t.nbytes());
  return bytes;
}

// What the forwards ran on, for the summary: the inputs file and its SHA-256, or the --shape
// tensors
ProfileInputs profile_inputs(const ForwardRun& run, const ForwardInputs& read) {
  ProfileInputs out;
  if (!run.inputs.empty()) {
    out.file = run.inputs.front();
    out.sha256 = read.sha256;
  } else if (run.shaped) {
    for (const ShapeSpec& spec : run.shaped->shapes)
      out.shapes.push_back({spec.name, spec.shape, spec.dtype});
  }
  return out;
}

// A profile on the meta device, which computes shapes and no values: its times and bytes are
// none, and what was ordered by time is ordered by FLOPs and calls instead, so that two
// profiles on meta are the same
void mark_unmeasured(ProfileRecords& records) {
  for (auto& m : records.modules) m.measured = false;
  for (auto& o : records.operators) o.measured = false;
  std::stable_sort(records.operators.begin(), records.operators.end(),
                   [](const OperatorProfile& a, const OperatorProfile& b) {
                     if (a.flops != b.flops) return a.flops > b.flops;
                     if (a.calls != b.calls) return a.calls > b.calls;
                     return a.name < b.name;
                   });
  std::stable_sort(records.summary.uncounted_operators.begin(),
                   records.summary.uncounted_operators.end(),
                   [](const UncountedOperator& a, const UncountedOperator& b) {
                     return a.calls != b.calls ? a.calls > b.calls : a.name < b.name;
                   });
}

// The summary's fields known before anything runs: what the forwards run on and with (contract
// 9.3: device and its name, threads, mode, inputs, versions), the runs asked for, the bytes.
ProfileSummary summary_of_run(const ProfileRequest& request, LoadedRun& loaded, bool measures) {
  ProfileSummary summary;
  // "cuda" named as its tensors name it ("cuda:0", the current device), so that two profiles on
  // one device say the same
  const c10::Device placed = at::empty({0}, at::TensorOptions().device(loaded.device())).device();
  summary.device = placed.str();
  summary.device_name = device_name(placed);
  summary.threads.intra_op = at::get_num_threads();
  summary.threads.inter_op = at::get_num_interop_threads();
  export_run::ProgramRunner* program = loaded.program();
  // an exported program's graph is fixed at export, which records no mode: it runs as exported
  summary.mode = program || !loaded.model().is_training() ? "eval" : "training";
  summary.runner = program ? "export_graph" : "torchscript";
  summary.inputs = profile_inputs(request.run, loaded.inputs().front());
  summary.torch_version = TORCH_VERSION;
  summary.vin_inspect_version = VIN_VERSION;
  summary.warmup = measures ? request.warmup : 0;
  summary.runs = measures ? request.runs : 0;
  summary.measured = measures;
  summary.seed = request.run.seed;
  if (program) {
    summary.parameter_bytes = distinct_bytes(program->weights("parameter"));
    summary.buffer_bytes = distinct_bytes(program->weights("buffer"));
  } else {
    summary.parameter_bytes = distinct_bytes(loaded.model().parameters());
    summary.buffer_bytes = distinct_bytes(loaded.model().buffers());
  }
  return summary;
}

// How many instrumented forwards profile runs, unrecorded then recorded, from the first one's
// time: under 1 ms, three unrecorded (the first calls' costs last that long there) and ten
// recorded; else the first alone unrecorded, and recorded as many as fit in 60 ms, at least two
// (one disturbed forward of resnet18 on this project's machine took 1.5x the others) and at
// most ten, and from 100 ms on once (the whole command's time: bench/bench_profile.py)
struct InstrumentedPasses {
  std::int64_t unrecorded = 1;  // until the first has run
  std::int64_t recorded = 1;
};
InstrumentedPasses instrumented_passes(double first_ms) {
  if (first_ms < 1) return {3, 10};
  if (first_ms >= 100) return {1, 1};
  return {1, static_cast<std::int64_t>(std::clamp(std::ceil(60.0 / first_ms), 2.0, 10.0))};
}

// What an instrumented clone's forward is given: the observers' scope open (`observed`), the
// operator callbacks installed (`callbacks`), as profile's phases and calibration ask.
struct CloneForward {
  bool observed = true;
  bool callbacks = true;
  bool shapes = false;  // the callbacks read every operator's argument shapes (the trace's)
};

// One forward of `capture`'s clone as `how` says, the recorder started first (what it held
// dropped); the device synchronised around it. Returns the clock's start and end, and whether
// operators ran on threads the callbacks could not attribute.
struct CloneTimes {
  Clock::time_point start, end;
  bool operators_elsewhere = false;
};
CloneTimes clone_forward(InstrumentedForward& instrumented, ProfileRecorder& recorder,
                         const ForwardInputs& inputs, c10::Device device, CloneForward how) {
  std::shared_ptr<void> observing;
  if (how.observed) observing = instrumented.observe();
  std::optional<OperatorEvents> events;
  synchronize_device(device);
  if (how.callbacks) events.emplace(recorder, device, how.shapes);
  recorder.start();
  CloneTimes times;
  times.start = Clock::now();
  instrumented.forward(inputs);
  synchronize_device(device);
  times.end = Clock::now();
  times.operators_elsewhere = events && events->saw_other_threads();
  return times;
}

// The instrumented forwards of phase 3 (run_instrumented): the records of the fastest recorded
// one and its times; why the records cannot be kept, if a recorded one says so.
struct InstrumentedForwards {
  std::optional<ProfileBuilder> fastest;
  Clock::time_point start, end;
  std::optional<std::string> failure;
};

// The clone's forward, first unrecorded: each method compiles its plan at its first call, and
// the first forwards under the recorder's callbacks pay their first calls' costs (allocations
// of LibTorch, the capture and the recorder: 0.1-0.2 ms of an MLP's 0.02 ms forward, for two
// or three forwards). Then recorded, kept from the fastest (the least disturbed by the rest of
// the machine); both counts from the first forward's time (instrumented_passes). A recorded
// forward whose events could not be attributed (recorder.failure) ends them.
std::optional<RunFailure> run_instrumented(LoadedRun& loaded, InstrumentedForward& capture,
                                           ProfileRecorder& recorder,
                                           const ProfileRequest& request, bool measures,
                                           const OnAbandoned& abandoned,
                                           InstrumentedForwards& out) {
  InstrumentedPasses passes;
  for (std::int64_t pass = 0; pass < passes.unrecorded + passes.recorded && !out.failure;
       ++pass) {
    const bool recorded = pass >= passes.unrecorded;
    const auto forward = [&](std::size_t) {
      const CloneTimes times = clone_forward(capture, recorder, loaded.inputs().front(),
                                             loaded.device(), {true, true, request.trace});
      if (pass == 0 && measures) passes = instrumented_passes(ms_between(times.start, times.end));
      char line[96];
      std::snprintf(line, sizeof line, "profile: instrumented forward %lld (%s) in %.3f ms",
                    static_cast<long long>(pass + 1), recorded ? "recorded" : "unrecorded",
                    ms_between(times.start, times.end));
      log_line(LogLevel::debug, line);
      if (!recorded) return;
      if ((out.failure = recorder.failure(times.operators_elsewhere))) return;
      if (out.fastest && ms_between(times.start, times.end) >= ms_between(out.start, out.end))
        return;
      out.fastest = recorder.builder();
      out.start = times.start;
      out.end = times.end;
    };
    if (auto failure = run_forwards(loaded, forward, &capture.stoppable(), abandoned))
      return failure;
  }
  return std::nullopt;
}

// The model the instrumentation's cost is measured on (docs/profile.md, "The instrumentation's
// cost"): its forward calls one submodule kCalibrationCalls times, which multiplies its 1x1
// input by itself and adds it (two operator calls, one counted, and their allocations), so that
// its events are many and its own work next to none
constexpr int kCalibrationCalls = 32;
constexpr int kCalibrationRepeats = 15;

torch::jit::Module calibration_model() {
  // one compilation unit: the root's forward calls the leaf's
  const auto unit = std::make_shared<torch::jit::CompilationUnit>();
  torch::jit::Module leaf("__torch__.vin_calibration.Leaf", unit, /*shouldMangle=*/true);
  leaf.define("def forward(self, x):\n    return torch.mm(x, x) + x\n");
  torch::jit::Module root("__torch__.vin_calibration.Calls", unit, /*shouldMangle=*/true);
  root.register_module("leaf", leaf);
  std::string body = "def forward(self, x):\n";
  // (a module defined from C++ is called by its method: its type has no __call__ here)
  for (int i = 0; i < kCalibrationCalls; ++i) body += "    x = self.leaf.forward(x)\n";
  root.define(body + "    return x\n");
  root.eval();
  return root;
}

// What one module event and one operator event cost on `device`, measured on
// calibration_model() and its instrumented clone with profile's own recorder (of the same
// options): the medians of kCalibrationRepeats forwards, interleaved, of the model as any user
// runs it, of the clone bare (no callback, the observers' scope closed), with the operator
// callbacks alone, and fully instrumented (measured_instrumentation_cost). `of_clone`: the
// profiled forward is a TorchScript clone's, which costs what the calibration clone's bare
// forward costs over the model's; an exported program's instrumented forward is the same
// interpreter's as its timed ones, so that cost is left out (its module and operator events are
// taken to cost what the clone's do: the recorder and the callbacks are the same).
std::optional<InstrumentationCost> calibrated_cost(LoadedRun& loaded, c10::Device device,
                                                   Clock::time_point origin,
                                                   const ProfileRequest& request,
                                                   const OnAbandoned& abandoned, bool of_clone,
                                                   std::string& failure) {
  torch::jit::Module model = calibration_model();
  model.to(device);
  std::vector<std::string> paths;
  auto recorder = std::make_shared<ProfileRecorder>(module_facts(model, paths), device, request);
  recorder->count_from(origin);
  ModelCapture capture = capture_model(model, std::nullopt, CaptureLimits());
  capture.add_consumer(recorder);
  InstrumentedClone clone(capture);
  ForwardInputs inputs;
  inputs.args.emplace_back(at::zeros({1, 1}, at::TensorOptions().device(device)));
  enum Instrumented { plain, bare, operators, fully };
  const CloneForward clone_as[] = {{}, {false, false}, {false, true, request.trace},
                                   {true, true, request.trace}};
  std::vector<double> ms[4];
  InstrumentationEvents events[4];
  for (int i = 0; i <= kCalibrationRepeats; ++i)
    for (const Instrumented how : {plain, bare, operators, fully}) {
      const auto forward = [&](std::size_t) {
        Clock::time_point start, end;
        if (how == plain) {  // the model itself, as any forward of it runs
          synchronize_device(device);
          start = Clock::now();
          model.forward(inputs.args);
          synchronize_device(device);
          end = Clock::now();
        } else {
          const CloneTimes times = clone_forward(clone, *recorder, inputs, device, clone_as[how]);
          start = times.start;
          end = times.end;
        }
        if (i > 0) ms[how].push_back(ms_between(start, end));  // the first: warm-up
        events[how] = recorder->builder().events();
      };
      // the model's plan optimised as LibTorch does for any user, the clone's as profile runs it
      const auto ran = how == plain ? run_forwards(loaded, forward, nullptr, abandoned,
                                                   GraphOptimisation::as_configured)
                                    : run_forwards(loaded, forward, &capture, abandoned);
      if (ran) {
        failure = "profile could not measure its instrumentation's cost: " + ran->message;
        return std::nullopt;
      }
    }
  const double bare_ms = latency_stats(ms[bare]).median;
  return measured_instrumentation_cost(
      {of_clone ? latency_stats(ms[plain]).median : bare_ms, bare_ms,
       latency_stats(ms[operators]).median, latency_stats(ms[fully]).median},
      events[operators], events[fully]);
}

// The recorded forward's records and spans into `result` (its summary's fields that the builder
// knows): the module and operator records, which modules' children did not run (of the
// `registered` paths, `selected` by --module), the FLOPs, uncounted operators and peak
void take_forward_records(const ProfileBuilder& builder, const std::vector<std::string>& registered,
                const std::unordered_set<std::string>& selected, const ProfileRequest& request,
                bool measures, ProfileResult& result) {
  ProfileSummary& summary = result.records.summary;
  result.records.modules = builder.modules();
  mark_uncalled_children(result.records.modules, registered, [&](const std::string& path) {
    return !request.module_paths || selected.count(path) > 0;
  });
  result.records.operators = builder.operators();
  result.spans.insert(result.spans.end(), builder.spans().begin(), builder.spans().end());
  result.memory = builder.memory_samples();
  summary.nested_operators = request.nested_operators;
  summary.flops = builder.flops();
  summary.uncounted_operators = builder.uncounted_operators();
  summary.peak_bytes = builder.peak_bytes();
  if (!measures) mark_unmeasured(result.records);
  summary.modules = static_cast<std::int64_t>(result.records.modules.size());
  summary.operators = static_cast<std::int64_t>(result.records.operators.size());
}

// Checks the request's rules, here once for every caller (the binary's options only parse), and
// says whether its forwards are measured: the meta device computes shapes and no values, so
// FLOPs and shapes are the model's and a time or a byte count would be only the dispatcher's
// (ProfileSummary::measured)
bool check_request_measured(const ProfileRequest& request) {
  if (request.run.inputs.size() + (request.run.shaped ? 1 : 0) != 1)
    throw UsageError(
        "--inputs: profile runs one forward: give one file with --inputs, or one set of --shape "
        "tensors");
  if (request.runs < 1 || request.runs > kMaxProfileRuns)
    throw UsageError("--runs: must be an integer in [1, " + std::to_string(kMaxProfileRuns) + "]");
  if (request.warmup < 0 || request.warmup > kMaxProfileRuns)
    throw UsageError("--warmup: must be an integer in [0, " + std::to_string(kMaxProfileRuns) +
                     "]");
  if (request.threads && (*request.threads < 1 || *request.threads > kMaxProfileThreads))
    throw UsageError("--threads: must be an integer in [1, " +
                     std::to_string(kMaxProfileThreads) + "]");
  const bool measures = !resolve_device(request.run.device, request.run.device_option).is_meta();
  if (request.trace && !measures)
    throw UsageError(
        "--trace: a trace is the forward's timeline, and on --device meta no time is "
        "measured (FLOPs and shapes only); profile on cpu or cuda for a trace");
  return measures;
}

// The loaded model and what instruments it, handed to the caller with the result
// (ProfileResult::models).
struct ProfiledModels {
  std::optional<LoadedRun> loaded;
  // destroyed first: they refer to the loaded model
  std::optional<ModelCapture> clone;
  std::unique_ptr<InstrumentedForward> instrumented;

  // The forward phase 3 instruments. A TorchScript module's clone: by phase 3 the graph
  // executor of the model's own methods has optimised them (inlining the submodules' calls into
  // the root's graph), and keeps running that plan whatever instrumentation puts into the
  // graphs; the clone's methods are new, from the graphs as compiled. Its torch.jit.fork tasks
  // run inline at the fork, so that every module call and operator is on the forward's thread,
  // nested where the code forked it (the timed runs keep LibTorch's inter-op parallelism). An
  // exported program runs on the same interpreter as in its timed runs, under ProgramCapture.
  InstrumentedForward& instrument(const ProfileRequest& request,
                                  std::shared_ptr<ProfileRecorder> recorder,
                                  StageStopwatch& stopwatch) {
    if (export_run::ProgramRunner* program = loaded->program()) {
      instrumented = std::make_unique<InstrumentedProgram>(*program, *loaded->program_forward(),
                                                           request, std::move(recorder));
      stopwatch.lap("planned the module calls");
    } else {
      clone.emplace(capture_model(loaded->model(), request.module_paths, CaptureLimits()));
      clone->add_consumer(std::move(recorder));
      instrumented = std::make_unique<InstrumentedClone>(*clone);
      stopwatch.lap("instrumented a clone of the model");
    }
    return *instrumented;
  }
};

}  // namespace

ProfileResult profile_archive(const ProfileRequest& request) {
  const bool measures = check_request_measured(request);
  // every forward, timed and instrumented, on the threads asked for (process-wide: profile runs
  // one archive)
  if (request.threads) at::set_num_threads(static_cast<int>(*request.threads));
  StageStopwatch stopwatch("profile");
  // the model and its clone go to the caller with the result (ProfileResult::models)
  auto models = std::make_shared<ProfiledModels>();
  ForwardRun run = request.run;
  run.digest_inputs = true;  // the summary names the inputs file by its SHA-256
  LoadedRun& loaded = models->loaded.emplace(
      run, [&](const char* stage) { stopwatch.lap(stage); }, nullptr, /*programs=*/true);
  export_run::ProgramRunner* program = loaded.program();
  // --module is checked before anything runs
  std::vector<std::string> paths;
  auto facts = program ? program_facts(*program, paths) : module_facts(loaded.model(), paths);
  std::unordered_set<std::string> selected;  // the paths --module names (patterns expanded)
  if (request.module_paths)
    for (std::string& path : select_module_paths(*request.module_paths, paths))
      selected.insert(std::move(path));
  const c10::Device device = loaded.device();
  ProfileResult result;
  result.models = models;
  ProfileSummary& summary = result.records.summary;
  summary = summary_of_run(request, loaded, measures);
  const OnAbandoned abandoned = [&request](const std::string& message) {
    if (request.on_abandoned) request.on_abandoned(message);
  };

  // phases 1 and 2: the archive as any user runs it, the device synchronised around each timed
  // forward on CUDA (its kernels run asynchronously)
  const ForwardInputs& inputs = loaded.inputs().front();
  const torch::jit::Kwargs kwargs(inputs.kwargs.begin(), inputs.kwargs.end());
  std::vector<double> times_ms;
  // what phase 3 instruments, made first (a failed forward of any phase runs on it again)
  auto recorder = std::make_shared<ProfileRecorder>(std::move(facts), device, request);
  InstrumentedForward& capture = models->instrument(request, recorder, stopwatch);
  // every time of the trace is from here: the runs' spans and the instrumented forward's events
  const Clock::time_point origin = Clock::now();
  recorder->count_from(origin);

  // A failed forward's error says where it raised (contract: the module path and the operator,
  // beside TorchScript's source line): the instrumented clone runs it again, unless the failure
  // was the instrumented forward's already, or a timeout or running out of memory (which a
  // second forward would only repeat)
  const auto instrumented_once = [&](std::size_t) {
    clone_forward(capture, *recorder, inputs, device, {});
  };
  const auto fail = [&](RunFailure failure, bool instrumented) {
    if (failure.raised && !instrumented)
      run_forwards(loaded, instrumented_once, &capture.stoppable(), abandoned);
    if (failure.raised)
      if (const auto where = recorder->builder().where_raised()) {
        // on TorchScript's "  at FILE:LINE, in FUNCTION" line where there is one (two lines)
        const auto last_line = failure.message.rfind('\n');
        const bool at_line = last_line != std::string::npos &&
                             failure.message.compare(last_line, 6, "\n  at ") == 0;
        failure.message += (at_line ? ", " : "\n  ") + *where;
      }
    result.error = std::move(failure.message);
    result.error_report = std::move(failure.report);
    return result;
  };
  const auto run_span = [&](std::string name, Clock::time_point start, Clock::time_point end) {
    if (request.trace)
      result.spans.push_back({ProfileSpan::Kind::run, std::move(name), "",
                              ms_between(origin, start), ms_between(start, end), {}, {}, 0});
  };
  // an exported program's arguments as its interpreter takes them, flattened once
  const std::vector<c10::IValue> program_arguments =
      program ? loaded.program_forward()->arguments(inputs) : std::vector<c10::IValue>();
  const auto plain_forward = [&](bool timed, std::int64_t number) {
    return [&, timed, number](std::size_t) {
      synchronize_device(device);
      const auto start = Clock::now();
      if (program)
        program->run(program_arguments);
      else
        loaded.model().get_method(inputs.method)(inputs.args, kwargs);
      synchronize_device(device);
      const auto end = Clock::now();
      if (timed) times_ms.push_back(ms_between(start, end));
      run_span((timed ? "timed run " : "warm-up ") + std::to_string(number), start, end);
    };
  };
  for (std::int64_t i = 0; i < summary.warmup; ++i) {
    if (auto failure = run_forwards(loaded, plain_forward(false, i + 1), nullptr, abandoned,
                                    GraphOptimisation::as_configured))
      return fail(std::move(*failure), false);
    if (request.on_progress) request.on_progress(ProfilePhase::warmup, i + 1, summary.warmup);
  }
  for (std::int64_t i = 0; i < summary.runs; ++i) {
    if (auto failure = run_forwards(loaded, plain_forward(true, i + 1), nullptr, abandoned,
                                    GraphOptimisation::as_configured))
      return fail(std::move(*failure), false);
    if (request.on_progress) request.on_progress(ProfilePhase::timed, i + 1, summary.runs);
  }
  stopwatch.lap("ran the warm-up and timed forwards");
  // phase 3 (below): the instrumented forwards
  if (measures) {
    summary.latency_ms = latency_stats(times_ms);
    summary.throughput = summary.latency_ms.median > 0 ? 1000.0 / summary.latency_ms.median : 0;
    summary.warnings = latency_warnings(times_ms, summary.warmup);
  }

  InstrumentationCost cost;
  if (measures) {
    // what the instrumentation costs, off the records' times (the trace keeps the clock's)
    std::string why;
    const auto measured =
        calibrated_cost(loaded, device, origin, request, abandoned, !program, why);
    if (!measured) return fail({why, ""}, true);
    cost = *measured;
    recorder->subtract(cost);
    stopwatch.lap("measured the instrumentation's cost");
  }
  InstrumentedForwards instrumented;
  if (auto failure = run_instrumented(loaded, capture, *recorder, request, measures, abandoned,
                                      instrumented))
    return fail(std::move(*failure), true);
  if (instrumented.failure)
    return fail({request.run.archive + ": " + *instrumented.failure, ""}, true);
  std::optional<ProfileBuilder>& fastest = instrumented.fastest;
  stopwatch.lap("ran the instrumented forwards");
  summary.instrumented_ms = ms_between(instrumented.start, instrumented.end);
  run_span(kInstrumentedForward, instrumented.start, instrumented.end);
  if (measures) {
    summary.overhead.ms = cost.of(fastest->events());
    summary.overhead.module_event_us = cost.module_event_ms * 1000;
    summary.overhead.operator_event_us = cost.operator_event_ms * 1000;
  }
  take_forward_records(*fastest, paths, selected, request, measures, result);
  return result;
}

}  // namespace vin::diagnostics
