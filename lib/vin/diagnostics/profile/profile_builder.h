// How the instrumented forward's events become ModuleProfile and OperatorProfile records
// (contract 8): module calls entered and left, operators started and ended, memory allocated and
// freed, each with its time, in the order the forward made them on its thread. The LibTorch side
// (graph observers, RecordFunction callbacks, the allocator's reports) feeds it; the attribution
// rules live here, without LibTorch, so that they are tested on event sequences.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "vin/diagnostics/records/profile_records.h"

namespace vin::diagnostics {

using Shapes = std::vector<std::vector<std::int64_t>>;

/// Events of the instrumentation, by the kind of callback that heard them: module calls' entries
/// and exits (the capture's observers), operator calls' starts and ends and memory reports
/// (RecordFunction callbacks, the allocators' reports).
struct InstrumentationEvents {
  std::int64_t module = 0;
  std::int64_t op = 0;
};

/// What one instrumentation event costs the forward, measured (profile_archive's calibration),
/// in milliseconds: subtracted from the times of the modules and operators whose calls it fell in.
struct InstrumentationCost {
  double module_event_ms = 0;
  double operator_event_ms = 0;
  double of(const InstrumentationEvents& e) const {
    return module_event_ms * static_cast<double>(e.module) +
           operator_event_ms * static_cast<double>(e.op);
  }
};

/// The medians of profile's calibration forwards (profile_archive): a model as any user runs it
/// (`plain`), and its instrumented clone bare (no callback, the observers' scope closed), with the
/// operator callbacks alone, fully instrumented.
struct CalibrationTimes {
  double plain_ms = 0;
  double bare_ms = 0;
  double operators_ms = 0;
  double fully_ms = 0;
};

/// What an event costs: the operator callbacks' cost (operators alone less bare) over the
/// operator events of that forward; the observers' (fully less operators alone) and the clone's
/// (bare less plain: its observers' nodes and its module calls, not inlined into one plan as the
/// model's are) over the module events of the fully instrumented one; never below 0.
InstrumentationCost measured_instrumentation_cost(const CalibrationTimes& times,
                                                  const InstrumentationEvents& operators_alone,
                                                  const InstrumentationEvents& fully);

class ProfileBuilder {
 public:
  /// A call of the module at `path` begins at `ms` (any clock, milliseconds) with inputs of
  /// `input_shapes`. `type` and `parameters` are kept from its first call.
  void enter_module(const std::string& path, const std::string& type, std::int64_t parameters,
                    Shapes input_shapes, double ms);
  /// The innermost module call returns `output_shapes` at `ms`. Throws std::logic_error when no
  /// call is open.
  void exit_module(Shapes output_shapes, double ms);

  /// An operator call begins at `ms` (`name` as its schema names it, "aten::linear") with
  /// arguments of `input_shapes` (kept for its span only). Operators begun while another is open
  /// are dispatched from it: only the outermost is an OperatorProfile. `graph_node`: the call is
  /// a node of an exported program ("aten.linear.default", contract 12.3), which stands for the
  /// operators the dispatcher calls inside it: it counts no FLOPs of its own (those inside it
  /// are its) and is never an uncounted operator itself (the one dispatched inside it is).
  void start_operator(const std::string& name, double ms, Shapes input_shapes = {},
                      bool graph_node = false);
  /// The innermost open operator call ends at `ms`; `flops` is what operator_flops gives for it
  /// (0 for an operator counts_flops refuses). Its FLOPs count only when no operator open around
  /// it counts FLOPs (once per dispatch stack, at the outermost counted operator). `raised`: an
  /// exception leaves it (the first such call is where the forward raised). Throws
  /// std::logic_error when no operator call is open.
  void end_operator(FlopCount flops, double ms, bool raised = false);

  /// Where the forward raised, for its error: "in module 'block.lin'
  /// (torch.nn.modules.linear.Linear), in operator aten::linear (at its aten::addmm)": the
  /// module call open (a module call an exception leaves never returns) and the operator that
  /// raised, as the code called it and, where it was dispatched from that one, itself. Nothing
  /// when neither is known.
  std::optional<std::string> where_raised() const;

  /// `bytes` allocated (positive) or freed (negative) on the profiled device at `ms`.
  void memory(std::int64_t bytes, double ms = 0);
  /// The device was synchronised from `start_ms` to `end_ms` (CUDA): a span when spans are kept.
  void device_synchronised(double start_ms, double end_ms);

  /// From now on an OperatorProfile counts only the operator calls made inside a module call
  /// (profile --module: the modules selected are the only ones entered); the FLOPs and the
  /// uncounted operators stay the whole forward's.
  void operators_inside_modules_only(bool on = true) { inside_modules_only_ = on; }

  /// From now on every operator call is an OperatorProfile's, those dispatched from another
  /// operator too (profile --nested-operators, as torch.profiler's table counts them), not only
  /// the outermost of each dispatch stack. Each counts the FLOPs counted inside its calls.
  void nested_operators(bool on = true) { nested_operators_ = on; }

  /// From now on keeps a ProfileSpan of every module call and of every outermost operator call
  /// (profile --trace).
  void keep_spans(bool on = true) { keep_spans_ = on; }
  /// The events heard so far.
  const InstrumentationEvents& events() const { return events_; }
  /// From now on each call's time, as it ends, has `cost` of every event inside it taken off:
  /// its self time loses its own events' (never below 0), its whole time is that plus its
  /// children's as they were taken (so a parent's time is never below its children's). The
  /// module, operator and uncounted operator records sum these; the spans keep the clock's.
  void subtract_instrumentation(InstrumentationCost cost) { cost_ = cost; }

  /// The spans kept, in the order the calls ended.
  const std::vector<ProfileSpan>& spans() const { return spans_; }
  /// The live bytes after each allocation and free, when spans are kept.
  const std::vector<MemorySample>& memory_samples() const { return memory_samples_; }

  /// The modules in the order of their first calls; every call must have returned.
  std::vector<ModuleProfile> modules() const;
  /// The operators by time, largest first (by name where times are equal).
  std::vector<OperatorProfile> operators() const;
  /// FLOPs of everything counted, inside modules or not.
  FlopCount flops() const { return flops_; }
  /// The operators whose work no rule counts (ProfileSummary::uncounted_operators): called at
  /// any depth, counted by no rule and on no list of operators without matrix work
  /// (without_matrix_work), with no counted operator inside or around the call; by time,
  /// largest first.
  std::vector<UncountedOperator> uncounted_operators() const;
  /// The most live bytes reached, counted from the first event.
  std::int64_t peak_bytes() const { return peak_; }

 private:
  struct ModuleFrame {
    std::size_t index = 0;  // into modules_
    double start_ms = 0;
    FlopCount flops = 0;  // inclusive, its finished children's added as they return
    FlopCount self_flops = 0;
    double child_ms = 0;
    std::int64_t live_at_start = 0;
    std::int64_t peak = 0;
    std::int64_t allocated = 0;
    Shapes input_shapes;  // this call's, for its span
    InstrumentationEvents events_at_start;
    InstrumentationEvents child_events;  // inside the calls of its submodules
    double child_taken_ms = 0;  // its submodules' calls' times, the cost taken off
  };
  struct OperatorFrame {
    std::string name;
    bool graph_node = false;
    double start_ms = 0;
    bool counts = false;
    bool counted_inside = false;  // a counted operator was called inside it
    bool has_work = false;  // FLOPs counted, or work no rule counts, in it or inside it
    FlopCount flops = 0;  // counted inside it
    double child_ms = 0;  // in the operators dispatched from it
    Shapes input_shapes;  // for its span
    InstrumentationEvents events_at_start;
    InstrumentationEvents child_events;  // inside the operators dispatched from it
    double child_taken_ms = 0;  // those operators' times, the cost taken off
  };
  // the events inside a call begun with `at_start` (its own end included, which stands for its
  // callbacks' halves on either side of its clock readings)
  InstrumentationEvents events_since(const InstrumentationEvents& at_start) const {
    return {events_.module - at_start.module, events_.op - at_start.op};
  }
  // a call's self and whole times with the instrumentation's cost taken off: `elapsed` by the
  // clock, `child_ms` of it in its children's calls (`child_taken_ms` once taken off), `inside`
  // the events from its start to its end, `child_events` those in its children's calls
  struct Taken {
    double self_ms, whole_ms;
  };
  Taken taken(double elapsed, double child_ms, double child_taken_ms,
              const InstrumentationEvents& inside, const InstrumentationEvents& child_events) const;
  void record_operator(const OperatorFrame& frame, double ms, const Taken& call_time);

  InstrumentationEvents events_;
  InstrumentationCost cost_;
  std::vector<ModuleProfile> modules_;
  std::unordered_map<std::string, std::size_t> module_index_;
  std::vector<ModuleFrame> module_stack_;
  std::vector<OperatorProfile> operators_;
  std::unordered_map<std::string, std::size_t> operator_index_;
  std::vector<OperatorFrame> operator_stack_;
  std::size_t open_counting_ = 0;  // open operators that count FLOPs
  std::vector<UncountedOperator> uncounted_;
  std::unordered_map<std::string, std::size_t> uncounted_index_;
  FlopCount flops_ = 0;
  std::int64_t live_ = 0;
  std::int64_t peak_ = 0;
  bool keep_spans_ = false;
  bool inside_modules_only_ = false;
  bool nested_operators_ = false;
  std::vector<ProfileSpan> spans_;
  std::vector<MemorySample> memory_samples_;
  struct Raised {
    std::string module_path, module_type;  // empty outside every module call
    std::string code_operator, operator_;  // the outermost open, and the one that raised
  };
  std::optional<Raised> raised_;
};

/// Fills each record's uncalled_children: the registered children of a module that ran (by
/// name, as its path ends) none of whose modules ran, of `registered` (every module path of the
/// model, "<root>" for the root, parents before children). `selected`: whether a path's calls
/// were observed (--module); a child with no selected module in it is not known to be uncalled.
void mark_uncalled_children(std::vector<ModuleProfile>& modules,
                            const std::vector<std::string>& registered,
                            const std::function<bool(const std::string&)>& selected);

}  // namespace vin::diagnostics
