#include "vin/diagnostics/profile/profile_builder.h"

#include <algorithm>
#include <stdexcept>

#include "vin/diagnostics/profile/flop_rules.h"

namespace vin::diagnostics {

void ProfileBuilder::enter_module(const std::string& path, const std::string& type,
                                  std::int64_t parameters, Shapes input_shapes, double ms) {
  auto [it, first] = module_index_.try_emplace(path, modules_.size());
  ModuleFrame frame;
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
  ModuleFrame frame = std::move(module_stack_.back());
  module_stack_.pop_back();
  ModuleProfile& m = modules_[frame.index];
  const double elapsed = ms - frame.start_ms;
  if (keep_spans_)
    spans_.push_back({ProfileSpan::Kind::module, m.module_path, m.module_type, frame.start_ms,
                      elapsed, std::move(frame.input_shapes), output_shapes, frame.flops});
  if (m.calls++ == 0) m.output_shapes = std::move(output_shapes);
  m.time_ms += elapsed;
  m.self_time_ms += std::max(0.0, elapsed - frame.child_ms);
  m.flops = add_flops(m.flops, frame.flops);
  m.self_flops = add_flops(m.self_flops, frame.self_flops);
  m.allocated_bytes += frame.allocated;
  m.peak_bytes = std::max(m.peak_bytes, frame.peak);
  if (!module_stack_.empty()) {
    ModuleFrame& parent = module_stack_.back();
    parent.child_ms += elapsed;
    parent.flops = add_flops(parent.flops, frame.flops);
  }
}

void ProfileBuilder::start_operator(const std::string& name, double ms, Shapes input_shapes) {
  const bool counts = counts_flops(name);
  operator_stack_.push_back(
      {name, ms, counts, false, 0, keep_spans_ ? std::move(input_shapes) : Shapes{}});
  if (counts) ++open_counting_;
}

void ProfileBuilder::end_operator(FlopCount flops, double ms) {
  if (operator_stack_.empty()) throw std::logic_error("end_operator without an operator call");
  OperatorFrame frame = std::move(operator_stack_.back());
  operator_stack_.pop_back();
  if (frame.counts) {
    --open_counting_;
    if (open_counting_ == 0 && flops > 0) {  // the outermost counted operator of its stack
      flops_ = add_flops(flops_, flops);
      OperatorFrame& outermost = operator_stack_.empty() ? frame : operator_stack_.front();
      outermost.flops = add_flops(outermost.flops, flops);
      if (!module_stack_.empty()) {
        ModuleFrame& module = module_stack_.back();
        module.flops = add_flops(module.flops, flops);
        module.self_flops = add_flops(module.self_flops, flops);
      }
    }
  }
  // work no rule counts: not counted itself, inside no counted operator, none counted inside it,
  // and not an operator without matrix work (a fused kernel, a quantized or custom operator)
  if (!frame.counts && !frame.counted_inside && open_counting_ == 0 &&
      !without_matrix_work(frame.name)) {
    auto [at, first] = uncounted_index_.try_emplace(frame.name, uncounted_.size());
    if (first) uncounted_.push_back(UncountedOperator{frame.name});
    ++uncounted_[at->second].calls;
    uncounted_[at->second].time_ms += ms - frame.start_ms;
  }
  if (!operator_stack_.empty()) {  // dispatched from an open operator: not its own record
    operator_stack_.back().counted_inside |= frame.counts || frame.counted_inside;
    return;
  }
  if (inside_modules_only_ && module_stack_.empty()) return;  // outside the modules selected
  auto [it, first] = operator_index_.try_emplace(frame.name, operators_.size());
  if (first) operators_.push_back(OperatorProfile{frame.name});
  OperatorProfile& op = operators_[it->second];
  ++op.calls;
  op.flops = add_flops(op.flops, frame.flops);
  op.time_ms += ms - frame.start_ms;
  if (keep_spans_)
    spans_.push_back({ProfileSpan::Kind::op,
                      frame.name,
                      "",
                      frame.start_ms,
                      ms - frame.start_ms,
                      std::move(frame.input_shapes),
                      {},
                      frame.flops});
}

void ProfileBuilder::memory(std::int64_t bytes) {
  live_ += bytes;
  peak_ = std::max(peak_, live_);
  for (ModuleFrame& frame : module_stack_) {
    if (bytes > 0) frame.allocated += bytes;
    frame.peak = std::max(frame.peak, live_ - frame.live_at_start);
  }
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

}  // namespace vin::diagnostics
