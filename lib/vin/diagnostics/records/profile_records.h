// Records of `vin-inspect profile` (contract 8): per module (ModuleProfile), per operator the
// archive's code calls (OperatorProfile), and the summary (ProfileSummary). Plain values;
// nothing here depends on LibTorch.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "vin/diagnostics/records/flop_count.h"

namespace vin::diagnostics {

/// What one module's calls cost in the instrumented forward.
struct ModuleProfile {
  std::string module_path;  ///< "<root>" for the root
  std::string module_type;  ///< Python-qualified (TorchScript mangling removed)
  std::int64_t calls = 0;
  std::int64_t parameters = 0;  ///< elements registered in it and below it, each tensor once
  /// the shapes of the tensors of its first call's inputs and output, in capture's walk order
  std::vector<std::vector<std::int64_t>> input_shapes;
  std::vector<std::vector<std::int64_t>> output_shapes;
  FlopCount flops = 0;       ///< all its calls, its submodules' included (`macs`: half)
  FlopCount self_flops = 0;  ///< outside its submodules' calls
  double time_ms = 0;
  double self_time_ms = 0;
  std::int64_t allocated_bytes = 0;  ///< allocated on its device during its calls
  std::int64_t peak_bytes = 0;       ///< most live bytes during one call, counted from its start
  /// its registered children (by name) none of whose modules ran during the forward, such as a
  /// TransformerEncoderLayer's on LibTorch's fused fast path: why it has no child records
  std::vector<std::string> uncalled_children;
  /// the operators its own code called (outside its submodules' calls) that did counted or
  /// uncounted work, in the order first called: where its uncalled children's work went
  /// (`called_instead` in its record when uncalled_children is not empty)
  std::vector<std::string> work_operators;
  /// false on the meta device, which computes shapes and no values: its times and bytes are no
  /// figures, and the records hold null for them (the same in OperatorProfile, ProfileSummary)
  bool measured = true;
};

/// One operator the archive's code calls (the outermost of a dispatch stack), or with
/// --nested-operators any operator called (ProfileSummary::nested_operators).
struct OperatorProfile {
  std::string name;  ///< as the graph names it: "aten::conv2d" (a .pt2's node: "aten.conv2d.default")
  std::int64_t calls = 0;
  FlopCount flops = 0;   ///< counted inside it (aten::linear's are its aten::addmm's; `macs`: half)
  double time_ms = 0;    ///< inclusive of what it dispatches to
  double self_time_ms = 0;  ///< outside the operators it dispatches to (torch.profiler's self)
  bool measured = true;  ///< as ModuleProfile's
};

/// An operator that ran whose work no FLOP rule counts (contract 9.3: ProfileSummary's
/// uncounted_operators): its calls at any depth of the dispatch, and their time.
struct UncountedOperator {
  std::string name;
  std::int64_t calls = 0;
  double time_ms = 0;
};

/// min, median, mean, p90 and max of the timed forwards' wall times, in milliseconds.
struct LatencyStats {
  double min = 0;
  double median = 0;  ///< the middle value, or the mean of the two middle values
  double mean = 0;
  double p90 = 0;  ///< nearest rank: the ceil(0.9 · n)-th smallest
  double max = 0;
};

/// The threads LibTorch ran the forwards with (--threads sets intra_op).
struct ProfileThreads {
  std::int64_t intra_op = 0;
  std::int64_t inter_op = 0;
};

/// One `--shape` tensor, as a profile's summary names its inputs.
struct ProfileShape {
  std::string name;
  std::vector<std::int64_t> shape;
  std::string dtype;  ///< torch's name without "torch.": "float32"
};

/// What the forwards ran on: the inputs file and its SHA-256, or the `--shape` tensors (made from
/// `seed`).
struct ProfileInputs {
  std::optional<std::string> file;
  std::optional<std::string> sha256;
  std::vector<ProfileShape> shapes;
};

/// What the instrumentation cost the recorded forward, measured (docs/profile.md): subtracted
/// from the module and operator times.
struct InstrumentationOverhead {
  double ms = 0;                 ///< in all, of the recorded forward
  double module_event_us = 0;    ///< per module call's entry or exit
  double operator_event_us = 0;  ///< per operator call's start or end, or memory report
};

/// The version of the records' schema (ProfileSummary's schema_version): raised when a field
/// of any record changes meaning or goes; fields added leave it.
inline constexpr std::int64_t kRecordSchemaVersion = 1;

/// One profile as a whole (the last record). Beside the numbers, what they were measured on and
/// with (device_name, threads, mode, inputs, versions), so that two profiles can be compared as
/// measurements: diff reports a difference there as an `environment` change.
struct ProfileSummary {
  std::string device;           ///< where the archive ran: "cpu", "cuda:0"
  std::string device_name;      ///< the CPU's model or the GPU's name
  ProfileThreads threads;
  std::string mode;             ///< "eval" or "training", as the root ran
  /// what ran the forwards: "torchscript" (LibTorch's TorchScript interpreter) or
  /// "export_graph" (this tool's interpreter of a .pt2's exported graph)
  std::string runner = "torchscript";
  std::int64_t warmup = 0;      ///< forwards run before the timed ones
  std::int64_t runs = 0;        ///< timed forwards
  LatencyStats latency_ms;      ///< over the timed forwards
  double throughput = 0;        ///< forwards per second: 1000 / median
  /// what makes the latency doubtful (no warm-up, a wide spread between runs), a sentence each;
  /// also written on stderr
  std::vector<std::string> warnings;
  FlopCount flops = 0;          ///< of one forward
  /// the operators that ran whose work no rule counts, by time, largest first: the FLOPs are
  /// then short of the forward's (flops_complete false)
  std::vector<UncountedOperator> uncounted_operators;
  double instrumented_ms = 0;   ///< the instrumented forward's wall time
  /// what the instrumentation cost it, taken off the module and operator times
  InstrumentationOverhead overhead;
  std::int64_t peak_bytes = 0;  ///< its most live bytes, counted from before it
  std::int64_t parameter_bytes = 0;
  std::int64_t buffer_bytes = 0;
  std::int64_t modules = 0;    ///< ModuleProfile records
  std::int64_t operators = 0;  ///< OperatorProfile records
  /// --nested-operators: the OperatorProfile records count every operator call, those
  /// dispatched from another operator too, not only the outermost ones
  bool nested_operators = false;
  std::uint64_t seed = 0;      ///< --seed: the random state every forward started from
  ProfileInputs inputs;
  std::string torch_version;        ///< the LibTorch that ran it
  std::string vin_inspect_version;  ///< the tool that profiled it
  /// false on meta: no forward is timed (warmup and runs 0), latency, throughput, the instrumented
  /// forward's time and peak memory are null
  bool measured = true;
};

/// A profile's records, as `vin-inspect profile` prints them and diff reads them back.
struct ProfileRecords {
  std::vector<ModuleProfile> modules;      ///< in the order of their first calls
  std::vector<OperatorProfile> operators;  ///< by time, largest first
  ProfileSummary summary;
};

/// One span of a profile's timeline for --trace: a module call or an operator call of the
/// instrumented forward (the outermost of its dispatch stack, every one with nested_operators),
/// a device synchronisation there (CUDA), or a whole forward (`run`: the warm-up and timed ones,
/// and the instrumented one around its calls). Times from the first forward's start.
struct ProfileSpan {
  enum class Kind { module, op, sync, run };
  Kind kind = Kind::module;
  std::string name;  ///< the module path, the operator, "timed run 3", "instrumented forward"
  std::string type;  ///< the module's type (modules only)
  double start_ms = 0;
  double duration_ms = 0;
  std::vector<std::vector<std::int64_t>> input_shapes;
  std::vector<std::vector<std::int64_t>> output_shapes;  ///< modules only
  FlopCount flops = 0;
};

/// The name of the instrumented forward's `run` span.
inline constexpr const char* kInstrumentedForward = "instrumented forward";

/// The live bytes on the profiled device after an allocation or a free of the instrumented
/// forward (the trace's counter track), counted from before it.
struct MemorySample {
  double ms = 0;  ///< on the spans' clock
  std::int64_t live_bytes = 0;
};

}  // namespace vin::diagnostics
