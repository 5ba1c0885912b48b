#include "vin/diagnostics/profiling/operator_events.h"

#include <ATen/Parallel.h>
#include <ATen/core/function_schema.h>
#include <ATen/record_function.h>
#include <c10/core/Allocator.h>
#include <c10/util/ThreadLocalDebugInfo.h>

#include <atomic>
#include <cstring>
#include <exception>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <unordered_map>

#include "vin/diagnostics/profile/flop_rules.h"

namespace vin::diagnostics {
namespace {

// The integer type of reportMemoryUsage's totals: int64_t in LibTorch 1.x, size_t in 2.x. An
// override must match it exactly; it is read off the base class instead of the version number.
template <class Method>
struct TotalsOf;
template <class Class, class Result, class Pointer, class Size, class Total, class Device>
struct TotalsOf<Result (Class::*)(Pointer, Size, Total, Total, Device)> {
  using type = Total;
};
using TotalBytes = TotalsOf<decltype(&c10::MemoryReportingInfoBase::reportMemoryUsage)>::type;

// Where memory reports go, closed when OperatorEvents ends: LibTorch copies the reporter into
// the tasks it launches (torch.jit.fork's, a wait's continuation), which may free tensors after
// the forward and the sink are gone.
struct ReportGate {
  std::mutex mutex;
  OperatorEventSink* sink = nullptr;
};

// Allocations and frees on the profiled device, from LibTorch's allocators (which report to the
// PROFILER_STATE debug info of the allocating thread).
class MemoryReporter final : public c10::MemoryReportingInfoBase {
 public:
  MemoryReporter(std::shared_ptr<ReportGate> gate, c10::Device device)
      : gate_(std::move(gate)), device_(device) {}
  bool memoryProfilingEnabled() const override { return true; }
  void reportMemoryUsage(void* /*ptr*/, std::int64_t alloc_size, TotalBytes /*total_allocated*/,
                         TotalBytes /*total_reserved*/, c10::Device device) override {
    if (device.type() != device_.type()) return;
    if (device_.has_index() && device.has_index() && device.index() != device_.index()) return;
    std::lock_guard<std::mutex> lock(gate_->mutex);
    if (gate_->sink) gate_->sink->memory_changed(alloc_size);
  }

 private:
  std::shared_ptr<ReportGate> gate_;
  c10::Device device_;
};

// Operator calls seen by a thread that did not install OperatorEvents: the thread-local callbacks
// travel into the tasks LibTorch launches for the forward (torch.jit.fork, a wait's
// continuation), whose calls profile cannot attribute.
std::atomic<std::int64_t> g_unattributed_calls{0};

// What a started operator call keeps until it ends: its shapes, when its FLOPs count.
struct OperatorContext final : at::ObserverContext {
  std::string name;
  bool counts = false;
  std::vector<std::optional<TensorShape>> arguments;
  bool transposed = false;
};

std::optional<TensorShape> shape_of(const c10::IValue& value) {
  if (!value.isTensor()) return std::nullopt;
  const at::Tensor& tensor = value.toTensor();
  if (!tensor.defined() || tensor.is_nested()) return std::nullopt;
  return tensor.sizes().vec();
}

// Where an operator's own values start among the `handed` values a callback gets: an operator
// the interpreter calls itself (a traced graph's aten::_convolution) hands over the
// interpreter's whole stack, whose last values are the schema's arguments (before the call)
// or returns (after it); `own`: their number, as the schema says, when it is known.
std::size_t first_own_value(std::size_t handed, std::optional<std::size_t> own) {
  return own && handed > *own ? handed - *own : 0;
}

// How many arguments and returns an operator's schema has, by the operator's name as RecordFunction
// hands it (a pointer into the dispatcher's schema, the same for every call of one overload):
// RecordFunction::operator_schema() copies the whole FunctionSchema, a cost (0.5-1 us) the
// counted operators would otherwise pay twice a call. Bounded: past kMaxCachedSchemas names
// (names that are not the schema's own, a build that hands copies) each call asks again.
struct SchemaSizes {
  std::optional<std::size_t> arguments, returns;
};
constexpr std::size_t kMaxCachedSchemas = 4096;

SchemaSizes schema_sizes(const at::RecordFunction& fn) {
  thread_local std::unordered_map<const char*, SchemaSizes> cache;
  const char* name = fn.name();
  const auto found = cache.find(name);
  if (found != cache.end()) return found->second;
  SchemaSizes sizes;
  if (const auto schema = fn.operator_schema()) {
    sizes.arguments = schema->arguments().size();
    sizes.returns = schema->returns().size();
  }
  if (cache.size() < kMaxCachedSchemas) cache.emplace(name, sizes);
  return sizes;
}

}  // namespace

struct OperatorEvents::State {
  State(OperatorEventSink& s, bool shapes) : sink(s), input_shapes(shapes) {}
  OperatorEventSink& sink;
  bool input_shapes;
  at::CallbackHandle handle = 0;
  std::shared_ptr<ReportGate> gate = std::make_shared<ReportGate>();
  std::optional<c10::DebugInfoGuard> memory;
  std::int64_t unattributed_before = 0;
};

namespace {

// The state of the thread that installed OperatorEvents; LibTorch runs thread-local callbacks on
// the worker threads it hands an operator's work to as well, where this is null.
thread_local OperatorEvents::State* t_events = nullptr;

std::unique_ptr<at::ObserverContext> operator_started(const at::RecordFunction& fn) {
  OperatorEvents::State* state = t_events;
  if (!state) {
    // an intra-op worker inside an operator of the forward's thread (a build whose parallel_for
    // hands the callbacks on) is part of that operator; a task of its own is not attributed
    if (!at::in_parallel_region()) g_unattributed_calls.fetch_add(1, std::memory_order_relaxed);
    return nullptr;
  }
  const char* name = fn.name();
  // capture's observer operator marks module calls; it is not the model's
  if (std::strncmp(name, "vin::", 5) == 0) return nullptr;
  auto context = std::make_unique<OperatorContext>();
  context->name = name;
  context->counts = counts_flops(name);
  std::vector<std::vector<std::int64_t>> shapes;
  if (context->counts || state->input_shapes) {
    const auto inputs = fn.inputs();
    const std::size_t first = first_own_value(inputs.size(), schema_sizes(fn).arguments);
    for (std::size_t i = first; i < inputs.size(); ++i) {
      auto shape = shape_of(inputs[i]);
      if (state->input_shapes && shape) shapes.push_back(*shape);
      if (context->counts) context->arguments.push_back(std::move(shape));
    }
    // convolution(input, weight, bias, stride, padding, dilation, transposed, ...)
    if (context->counts && inputs.size() > first + 6 && inputs[first + 6].isBool())
      context->transposed = inputs[first + 6].toBool();
  }
  state->sink.operator_started(name, std::move(shapes));
  return context;
}

void operator_ended(const at::RecordFunction& fn, at::ObserverContext* base) {
  OperatorEvents::State* state = t_events;
  if (!state || !base) return;
  auto* context = static_cast<OperatorContext*>(base);
  FlopCount flops = 0;
  if (context->counts) {
    OperatorCall call{context->name, std::move(context->arguments), {}, context->transposed};
    // the first of the schema's returns
    const auto& outputs = fn.outputs();
    const std::size_t first = first_own_value(outputs.size(), schema_sizes(fn).returns);
    if (first < outputs.size())
      if (auto shape = shape_of(outputs[first])) call.output = std::move(*shape);
    flops = operator_flops(call);
  }
  state->sink.operator_ended(flops, std::uncaught_exceptions() > 0);
}

}  // namespace

OperatorEvents::OperatorEvents(OperatorEventSink& sink, c10::Device device, bool input_shapes)
    : state_(std::make_unique<State>(sink, input_shapes)) {
  if (t_events) throw std::logic_error("OperatorEvents installed twice on one thread");
  state_->gate->sink = &sink;
  state_->memory.emplace(c10::DebugInfoKind::PROFILER_STATE,
                         std::make_shared<MemoryReporter>(state_->gate, device));
  state_->handle =
      at::addThreadLocalCallback(at::RecordFunctionCallback(&operator_started, &operator_ended)
                                     .needsInputs(true)
                                     .needsOutputs(true)
                                     .scopes({at::RecordScope::FUNCTION}));
  // last: nothing above may throw with the thread pointing at this state
  state_->unattributed_before = g_unattributed_calls.load();
  t_events = state_.get();
}

OperatorEvents::~OperatorEvents() {
  t_events = nullptr;
  at::removeCallback(state_->handle);
  state_->memory.reset();
  std::lock_guard<std::mutex> lock(state_->gate->mutex);
  state_->gate->sink = nullptr;
}

bool OperatorEvents::saw_other_threads() const {
  return g_unattributed_calls.load() != state_->unattributed_before;
}

}  // namespace vin::diagnostics
