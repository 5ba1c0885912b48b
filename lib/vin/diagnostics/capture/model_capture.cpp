#include "vin/diagnostics/capture/model_capture.h"

#include <algorithm>
#include <array>
#include <mutex>
#include <sstream>
#include <string_view>
#include <thread>
#include <unordered_map>
#include <unordered_set>

#include "vin/diagnostics/capture/call_recorder.h"
#include "vin/diagnostics/capture/capture_request.h"
#include "vin/diagnostics/instrument/autocast_blocks.h"
#include "vin/diagnostics/instrument/graph_instrumentation.h"
#include "vin/diagnostics/instrument/hook_retyping.h"
#include "vin/diagnostics/instrument/inline_forks.h"
#include "vin/diagnostics/capture/tensor_sampling.h"
#include "vin/diagnostics/records/error.h"
#include "vin/diagnostics/plugin/log_sink.h"
#include "vin/diagnostics/records/model_metadata.h"
#include "vin/diagnostics/text/module_selection.h"
#include "vin/diagnostics/torch/dtype_names.h"
#include "vin/diagnostics/torch/model_loader.h"

namespace vin::diagnostics {

// What a TorchScript capture knows besides the recorder: the instrumented module, the root's
// scripted hooks, and which module object is which recorded path. The observer operator reaches
// it through graph_instrumentation's registry, by the id that instrumentation baked into the
// graphs.
struct ModelCapture::State : GraphObserver {
  State(const torch::jit::Module& model, std::optional<std::vector<std::string>> paths,
        CaptureLimits quota, bool in_place);
  ~State();

  void observe(const c10::IValue& module, std::int64_t side, const c10::IValue& value) override;

  // the recorder first: its staging pools are reserved below the clone's graphs in the heap
  // (reserved right before a forward instead, they raised the heap's top under the forward's
  // tensors: an LSTM's recording forward then faulted pages in, 1.2-1.3x its plain forward)
  CallRecorder recorder;
  std::int64_t id = 0;
  torch::jit::Module original;
  torch::jit::Module instrumented;
  // the root's scripted forward pre-hooks and hooks, run around the instrumented forward
  std::vector<torch::jit::Function*> pre_hooks;
  std::vector<torch::jit::Function*> hooks;
  // the module types whose forward-named graphs observe their own calls (instrument_module)
  std::unordered_set<const c10::ClassType*> observing_themselves;
  // each registered module object's place in the recorder's paths (its first path in
  // named_modules order): looked up by object once per observation, no string hashed
  std::unordered_map<const c10::ivalue::Object*, std::size_t> module_of;
};

namespace {

// every module's first path in named_modules() order ("<root>" first): a module registered
// under two names is one module, recorded under its first
std::vector<std::string> module_paths(const torch::jit::Module& model) {
  std::vector<std::string> paths;
  std::unordered_set<const c10::ivalue::Object*> seen;
  for (const auto& item : model.named_modules())
    if (seen.insert(item.value._ivalue().get()).second)
      paths.push_back(item.name.empty() ? kRootPath : item.name);
  return paths;
}

}  // namespace

ModelCapture::State::State(const torch::jit::Module& model,
                           std::optional<std::vector<std::string>> paths, CaptureLimits quota,
                           bool in_place)
    : recorder(module_paths(model), std::move(paths), quota), original(model) {
  // clone(inplace): the clone shares parameters and buffers with the caller's module (no
  // copies); its class types and graphs are new, so instrumenting them leaves the caller's
  // untouched. In place, the module's own graphs are instrumented (no clone to make).
  instrumented = in_place ? model : model.clone(/*inplace=*/true);
  pre_hooks = model.type()->getForwardPreHooks();
  hooks = model.type()->getForwardHooks();
  if (!in_place) {
    HookRetyping retyping(model, instrumented);
    retyping.retype_calls_in_methods();
    for (auto& hook : pre_hooks) hook = retyping.copy_of(*hook);
    for (auto& hook : hooks) hook = retyping.copy_of(*hook);
  }
  id = register_observer(this);
  observing_themselves = instrument_module(instrumented, id);
  mark_autocast_blocks(instrumented);
  std::unordered_map<std::string, std::size_t> index_of;
  for (std::size_t i = 0; i < recorder.paths().size(); ++i) index_of.emplace(recorder.paths()[i], i);
  for (const auto& item : instrumented.named_modules()) {
    const auto at = index_of.find(item.name.empty() ? kRootPath : item.name);
    if (at != index_of.end()) module_of.emplace(item.value._ivalue().get(), at->second);
  }
}

ModelCapture::State::~State() { unregister_observer(id); }

void ModelCapture::State::observe(const c10::IValue& module, std::int64_t side,
                                  const c10::IValue& value) {
  if (!module.isObject()) return;
  if (side == kInterfaceInputSide || side == kInterfaceOutputSide) {
    // a call through an interface: the module's own graphs observed it if its type does so
    if (observing_themselves.count(module.toObject()->type().get())) return;
    side = side == kInterfaceInputSide ? kInputSide : kOutputSide;
  }
  const auto it = module_of.find(module.toObject().get());
  if (it == module_of.end()) {
    recorder.check_deadline();  // a module call all the same
    return;
  }
  // calls between modules inside TorchScript are positional: everything is under "args"
  if (side == kInputSide)
    recorder.call_begins(it->second, value);
  else
    recorder.call_ends(it->second, value);
}

ModelCapture::ModelCapture(const torch::jit::Module& model,
                           std::optional<std::vector<std::string>> module_paths,
                           CaptureLimits limits, Instrument where)
    : state_(std::make_unique<State>(model, std::move(module_paths), limits,
                                     where == Instrument::in_place)) {}

ModelCapture::~ModelCapture() = default;
ModelCapture::ModelCapture(ModelCapture&&) noexcept = default;
ModelCapture& ModelCapture::operator=(ModelCapture&&) noexcept = default;

ModelCapture::Scope ModelCapture::enter() {
  state_->recorder.enter();
  return Scope(this);
}

void ModelCapture::add_consumer(std::shared_ptr<TensorConsumer> consumer) {
  state_->recorder.add_consumer(std::move(consumer));
}

void ModelCapture::close() { state_->recorder.close(); }

c10::IValue ModelCapture::forward(const ForwardInputs& inputs, ForkTasks forks) {
  State& s = *state_;
  const AutocastBlocksGuard autocast_blocks;  // what a forward that threw left open
  std::vector<c10::IValue> args = inputs.args;
  // Module::operator() order: pre-hooks (which see positional arguments only), forward, hooks.
  // Run as functions with the instrumented module as `self` (a clone's class type has no hooks
  // of its own: State keeps copies typed for the clone).
  const c10::IValue self(s.instrumented._ivalue());
  auto run_hook = [&self, forks](torch::jit::Function* hook, std::vector<c10::IValue> extra) {
    torch::jit::Stack stack{self};
    for (auto& v : extra) stack.push_back(std::move(v));
    if (forks == ForkTasks::inline_at_fork)
      return value_when_done(hook->runAsync(stack, launch_at_fork));
    hook->run(stack);
    return stack.empty() ? c10::IValue() : stack.back();
  };
  for (torch::jit::Function* hook : s.pre_hooks) {
    c10::IValue result = run_hook(hook, {c10::ivalue::Tuple::create(args)});
    if (result.isNone()) continue;
    args = result.isTuple() ? result.toTupleRef().elements().vec() : std::vector{result};
  }
  s.recorder.call_begins(0, c10::ivalue::Tuple::create(args), inputs.kwargs);
  torch::jit::Kwargs kwargs(inputs.kwargs.begin(), inputs.kwargs.end());
  c10::IValue output;
  try {
    torch::jit::Method method = s.instrumented.get_method(inputs.method);
    output = forks == ForkTasks::inline_at_fork
                 ? value_when_done(method.run_async(args, kwargs, launch_at_fork))
                 : method(args, kwargs);
    for (torch::jit::Function* hook : s.hooks) {
      c10::IValue result = run_hook(hook, {c10::ivalue::Tuple::create(args), output});
      if (!result.isNone()) output = result;
    }
  } catch (...) {
    // invocations the exception aborted get no output record
    s.recorder.forget_pending_calls();
    throw;
  }
  s.recorder.call_ends(0, output);
  return output;
}

void ModelCapture::set_deadline(std::optional<std::chrono::steady_clock::time_point> deadline) {
  state_->recorder.set_deadline(deadline);
}

bool ModelCapture::timed_out() const { return state_->recorder.timed_out(); }

std::optional<std::pair<std::vector<TensorSnapshot>, CaptureSummary>> ModelCapture::copy_when_idle(
    std::chrono::milliseconds patience) const {
  return state_->recorder.copy_when_idle(patience);
}

const std::vector<TensorSnapshot>& ModelCapture::snapshots() const {
  return state_->recorder.snapshots();
}
std::int64_t ModelCapture::snapshot_count() const { return state_->recorder.snapshot_count(); }
std::int64_t ModelCapture::sampled_bytes() const { return state_->recorder.sampled_bytes(); }
bool ModelCapture::active() const { return state_->recorder.active(); }
std::optional<std::string> ModelCapture::stopped_by() const {
  return state_->recorder.stopped_by();
}
const CaptureLimits& ModelCapture::limits() const { return state_->recorder.limits(); }
CaptureSummary ModelCapture::summary() const { return state_->recorder.summary(); }

ModelCapture capture_model(const torch::jit::Module& model,
                           std::optional<std::vector<std::string>> module_paths,
                           CaptureLimits limits) {
  return ModelCapture(model, std::move(module_paths), limits);
}

ModelCapture capture_model_in_place(torch::jit::Module& model,
                                    std::optional<std::vector<std::string>> module_paths,
                                    CaptureLimits limits) {
  return ModelCapture(model, std::move(module_paths), limits, ModelCapture::Instrument::in_place);
}

}  // namespace vin::diagnostics
