#include "vin/diagnostics/profile/profile_builder.h"

#include <algorithm>
#include <stdexcept>
#include <unordered_map>

#include "vin/diagnostics/profile/flop_rules.h"
#include "vin/diagnostics/records/model_metadata.h"

namespace vin::diagnostics {

InstrumentationCost measured_instrumentation_cost(const CalibrationTimes& times,
                                                  const InstrumentationEvents& operators_alone,
                                                  const InstrumentationEvents& fully) {
  InstrumentationCost cost;
  if (operators_alone.op > 0)
    cost.operator_event_ms =
        std::max(0.0, times.operators_ms - times.bare_ms) / static_cast<double>(operators_alone.op);
  if (fully.module > 0)
    cost.module_event_ms =
        (std::max(0.0, times.fully_ms - times.operators_ms) +
         std::max(0.0, times.bare_ms - times.plain_ms)) /
        static_cast<double>(fully.module);
  return cost;
}

void ProfileBuilder::enter_module(const std::string& path, const std::string& type,
                                  std::int64_t parameters, Shapes input_shapes, double ms) {
  ++events_.module;
  auto [it, first] = module_index_.try_emplace(path, modules_.size());
  ModuleFrame frame;
  frame.events_at_start = events_;
  if (keep_spans_) frame.input_shapes = input_shapes;
  if (first) {
    ModuleProfile m;
    m.module_path = path;
    m.module_type = type;
    m.parameters = parameters;
    m.input_shapes = std::move(input_shapes);
    modules_.push_back(std::move(m));
  }
  frame.index = it->second;
  frame.start_ms = ms;
  frame.live_at_start = live_;
  module_stack_.push_back(frame);
}

void ProfileBuilder::exit_module(Shapes output_shapes, double ms) {
  if (module_stack_.empty()) throw std::logic_error("exit_module without a module call");
  ++events_.module;
  ModuleFrame frame = std::move(module_stack_.back());
  module_stack_.pop_back();
  const InstrumentationEvents inside = events_since(frame.events_at_start);
  ModuleProfile& m = modules_[frame.index];
  const double elapsed = ms - frame.start_ms;
  if (keep_spans_)
    spans_.push_back({ProfileSpan::Kind::module, m.module_path, m.module_type, frame.start_ms,
                      elapsed, std::move(frame.input_shapes), output_shapes, frame.flops});
  if (m.calls++ == 0) m.output_shapes = std::move(output_shapes);
  const Taken call_time =
      taken(elapsed, frame.child_ms, frame.child_taken_ms, inside, frame.child_events);
  m.time_ms += call_time.whole_ms;
  m.self_time_ms += call_time.self_ms;
  m.flops = add_flops(m.flops, frame.flops);
  m.self_flops = add_flops(m.self_flops, frame.self_flops);
  m.allocated_bytes += frame.allocated;
  m.peak_bytes = std::max(m.peak_bytes, frame.peak);
  if (!module_stack_.empty()) {
    ModuleFrame& parent = module_stack_.back();
    parent.child_ms += elapsed;
    parent.child_taken_ms += call_time.whole_ms;
    parent.child_events.module += inside.module;
    parent.child_events.op += inside.op;
    parent.flops = add_flops(parent.flops, frame.flops);
  }
}

void ProfileBuilder::start_operator(const std::string& name, double ms, Shapes input_shapes,
                                    bool graph_node) {
  ++events_.op;
  raised_.reset();  // an exception left an operator and was caught: the forward went on
  const bool counts = !graph_node && counts_flops(name);
  OperatorFrame frame;
  frame.graph_node = graph_node;
  frame.events_at_start = events_;
  frame.name = name;
  frame.start_ms = ms;
  frame.counts = counts;
  if (keep_spans_) frame.input_shapes = std::move(input_shapes);
  operator_stack_.push_back(std::move(frame));
  if (counts) ++open_counting_;
}

void ProfileBuilder::end_operator(FlopCount flops, double ms, bool raised) {
  if (operator_stack_.empty()) throw std::logic_error("end_operator without an operator call");
  ++events_.op;
  OperatorFrame frame = std::move(operator_stack_.back());
  operator_stack_.pop_back();
  if (raised && !raised_) {  // the innermost call the exception left, first
    raised_.emplace();
    raised_->operator_ = frame.name;
    raised_->code_operator = operator_stack_.empty() ? frame.name : operator_stack_.front().name;
    if (!module_stack_.empty()) {
      raised_->module_path = modules_[module_stack_.back().index].module_path;
      raised_->module_type = modules_[module_stack_.back().index].module_type;
    }
  }
  const InstrumentationEvents inside = events_since(frame.events_at_start);
  const Taken call_time = taken(ms - frame.start_ms, frame.child_ms, frame.child_taken_ms, inside,
                                frame.child_events);
  if (frame.counts) {
    --open_counting_;
    if (open_counting_ == 0 && flops > 0) {  // the outermost counted operator of its stack
      flops_ = add_flops(flops_, flops);
      // counted inside it and inside every operator open around it
      frame.flops = add_flops(frame.flops, flops);
      for (OperatorFrame& open : operator_stack_) open.flops = add_flops(open.flops, flops);
      frame.has_work = true;
      if (!module_stack_.empty()) {
        ModuleFrame& module = module_stack_.back();
        module.flops = add_flops(module.flops, flops);
        module.self_flops = add_flops(module.self_flops, flops);
      }
    }
  }
  // work no rule counts: not counted itself, inside no counted operator, none counted inside it,
  // and not an operator without matrix work (a fused kernel, a quantized or custom operator)
  if (!frame.counts && !frame.counted_inside && open_counting_ == 0 && !frame.graph_node &&
      !without_matrix_work(frame.name)) {
    auto [at, first] = uncounted_index_.try_emplace(frame.name, uncounted_.size());
    if (first) uncounted_.push_back(UncountedOperator{frame.name});
    ++uncounted_[at->second].calls;
    uncounted_[at->second].time_ms += call_time.whole_ms;
    frame.has_work = true;
  }
  const bool outermost = operator_stack_.empty();
  if (!outermost) {  // dispatched from an open operator
    OperatorFrame& caller = operator_stack_.back();
    caller.counted_inside |= frame.counts || frame.counted_inside;
    caller.has_work |= frame.has_work;
    caller.child_ms += ms - frame.start_ms;
    caller.child_taken_ms += call_time.whole_ms;
    caller.child_events.module += inside.module;
    caller.child_events.op += inside.op;
  } else if (frame.has_work && !module_stack_.empty()) {
    // the work a module's own code did (ModuleProfile::work_operators)
    std::vector<std::string>& work = modules_[module_stack_.back().index].work_operators;
    if (std::find(work.begin(), work.end(), frame.name) == work.end())
      work.push_back(frame.name);
  }
  if (outermost || nested_operators_) record_operator(frame, ms, call_time);
}

ProfileBuilder::Taken ProfileBuilder::taken(double elapsed, double child_ms,
                                            double child_taken_ms,
                                            const InstrumentationEvents& inside,
                                            const InstrumentationEvents& child_events) const {
  const InstrumentationEvents own{inside.module - child_events.module,
                                  inside.op - child_events.op};
  const double self = std::max(0.0, elapsed - child_ms - cost_.of(own));
  return {self, self + child_taken_ms};
}

// `frame`'s call, ended at `ms`, into its OperatorProfile (and its span)
void ProfileBuilder::record_operator(const OperatorFrame& frame, double ms,
                                     const Taken& call_time) {
  if (inside_modules_only_ && module_stack_.empty()) return;  // outside the modules selected
  auto [it, first] = operator_index_.try_emplace(frame.name, operators_.size());
  if (first) operators_.push_back(OperatorProfile{frame.name});
  OperatorProfile& op = operators_[it->second];
  const double elapsed = ms - frame.start_ms;
  ++op.calls;
  op.flops = add_flops(op.flops, frame.flops);
  op.time_ms += call_time.whole_ms;
  op.self_time_ms += call_time.self_ms;
  if (keep_spans_)
    spans_.push_back(
        {ProfileSpan::Kind::op, frame.name, "", frame.start_ms, elapsed, frame.input_shapes, {},
         frame.flops});
}

void ProfileBuilder::device_synchronised(double start_ms, double end_ms) {
  if (keep_spans_)
    spans_.push_back({ProfileSpan::Kind::sync, "device synchronize", "", start_ms,
                      end_ms - start_ms, {}, {}, 0});
}

void ProfileBuilder::memory(std::int64_t bytes, double ms) {
  ++events_.op;
  live_ += bytes;
  if (keep_spans_) memory_samples_.push_back({ms, live_});
  peak_ = std::max(peak_, live_);
  for (ModuleFrame& frame : module_stack_) {
    if (bytes > 0) frame.allocated += bytes;
    frame.peak = std::max(frame.peak, live_ - frame.live_at_start);
  }
}

std::optional<std::string> ProfileBuilder::where_raised() const {
  std::string module_path, module_type;
  if (raised_) {
    module_path = raised_->module_path;
    module_type = raised_->module_type;
  } else if (!module_stack_.empty()) {  // raised by the code itself, not in an operator
    module_path = modules_[module_stack_.back().index].module_path;
    module_type = modules_[module_stack_.back().index].module_type;
  }
  std::string where;
  if (!module_path.empty()) where = "in module '" + module_path + "' (" + module_type + ")";
  if (raised_) {
    where += (where.empty() ? "" : ", ") + std::string("in operator ") + raised_->code_operator;
    if (raised_->operator_ != raised_->code_operator)
      where += " (at its " + raised_->operator_ + ")";
  }
  if (where.empty()) return std::nullopt;
  return where;
}

std::vector<ModuleProfile> ProfileBuilder::modules() const { return modules_; }

std::vector<UncountedOperator> ProfileBuilder::uncounted_operators() const {
  std::vector<UncountedOperator> sorted = uncounted_;
  std::stable_sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) {
    return a.time_ms != b.time_ms ? a.time_ms > b.time_ms : a.name < b.name;
  });
  return sorted;
}

std::vector<OperatorProfile> ProfileBuilder::operators() const {
  std::vector<OperatorProfile> sorted = operators_;
  std::stable_sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) {
    return a.time_ms != b.time_ms ? a.time_ms > b.time_ms : a.name < b.name;
  });
  return sorted;
}

namespace {

// "a.b.c" -> "a.b"; a top-level path's parent is the root
std::string parent_path(const std::string& path) {
  const auto dot = path.rfind('.');
  return dot == std::string::npos ? std::string(kRootPath) : path.substr(0, dot);
}

}  // namespace

void mark_uncalled_children(std::vector<ModuleProfile>& modules,
                            const std::vector<std::string>& registered,
                            const std::function<bool(const std::string&)>& selected) {
  std::unordered_map<std::string, std::size_t> record;  // path -> index into modules
  for (std::size_t i = 0; i < modules.size(); ++i) record.emplace(modules[i].module_path, i);
  // whether a path or a module below it ran, or was observed at all
  std::unordered_map<std::string, bool> ran, observed;
  for (const std::string& path : registered) {
    const bool called = record.count(path) > 0;
    const bool watched = selected(path);
    for (std::string at = path;; at = parent_path(at)) {
      ran[at] = ran[at] || called;
      observed[at] = observed[at] || watched;
      if (at == kRootPath) break;
    }
  }
  for (const std::string& path : registered) {
    if (path == kRootPath || ran[path] || !observed[path]) continue;
    const std::string parent = parent_path(path);
    const auto at = record.find(parent);
    if (at == record.end()) continue;  // its parent did not run either: said there, if anywhere
    const std::string name = parent == kRootPath ? path : path.substr(parent.size() + 1);
    modules[at->second].uncalled_children.push_back(name);
  }
}

}  // namespace vin::diagnostics
