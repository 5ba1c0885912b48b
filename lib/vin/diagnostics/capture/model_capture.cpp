#include "vin/diagnostics/capture/model_capture.h"

#include <torch/csrc/jit/api/function_impl.h>
#include <torch/csrc/jit/ir/ir.h>
#include <torch/csrc/jit/runtime/custom_operator.h>

#include <algorithm>
#include <array>
#include <mutex>
#include <sstream>
#include <string_view>
#include <thread>
#include <unordered_map>
#include <unordered_set>

#include "vin/diagnostics/capture/capture_request.h"
#include "vin/diagnostics/capture/tensor_sampling.h"
#include "vin/diagnostics/records/error.h"
#include "vin/diagnostics/records/log_sink.h"
#include "vin/diagnostics/torch/dtype_names.h"
#include "vin/diagnostics/records/model_metadata.h"
#include "vin/diagnostics/text/module_selection.h"
#include "vin/diagnostics/torch/model_loader.h"

namespace vin::diagnostics {

// Everything a capture knows and records. The observer operator reaches it through the
// registry below, by the id that instrumentation baked into the clone's graphs.
struct ModelCapture::State {
  State(const torch::jit::Module& model, std::optional<std::vector<std::string>> paths,
        CaptureLimits quota, bool in_place);
  ~State();

  void observe(const c10::IValue& module, std::int64_t side, const c10::IValue& value);
  void observe_root_input(const std::vector<c10::IValue>& args,
                          const std::vector<std::pair<std::string, c10::IValue>>& kwargs);
  void observe_root_output(const c10::IValue& output);
  // stops the forward (by throwing) once the deadline has passed; called with `mutex` held
  void check_deadline();
  // the summary record of what was captured so far; called with `mutex` held
  CaptureSummary summarize() const;
  // has_nonfinite, remembered for the last few tensors: one module's output is the next one's
  // input (and its parent's), so most tensors are met several times, unchanged in between (the
  // version counter says so). The references kept delay freeing those few tensors a little.
  bool checked_nonfinite(const at::Tensor& tensor);
  struct Checked {
    at::Tensor tensor;
    std::int64_t version = 0;
    bool nonfinite = false;
  };
  std::array<Checked, 8> recently_checked;
  std::size_t next_checked = 0;

  std::int64_t id = 0;
  torch::jit::Module original;
  torch::jit::Module instrumented;
  std::optional<std::vector<std::string>> requested_paths;
  CaptureLimits limits;

  // the module types whose forward-named graphs observe their own calls (instrument_module)
  std::unordered_set<const c10::ClassType*> observing_themselves;
  // One registered module (by object; its first path in named_modules order) and its calls.
  // Looked up by object once per observation: no string is hashed on a module call.
  struct ModuleCalls {
    std::string path;
    bool selected = false;
    std::int64_t next_index = 0;        // the call index its next call gets
    std::vector<std::int64_t> pending;  // its calls begun and not ended, innermost last
  };
  std::vector<ModuleCalls> modules;  // the root first; never resized after construction
  std::unordered_map<const c10::ivalue::Object*, std::size_t> module_of;
  std::vector<std::string> all_paths;

  mutable std::mutex mutex;  // forwards may fork; the observer can run on several threads
  bool active = false;
  std::optional<std::chrono::steady_clock::time_point> deadline;  // capture --timeout
  bool timed_out = false;
  std::vector<TensorSnapshot> snapshots;
  std::int64_t sampled_bytes = 0;
  std::optional<std::string> stopped_by;
  bool with_stats = false;
  std::optional<SnapshotLocation> first_nonfinite;
  std::int64_t checked_tensors = 0;
  std::int64_t nonfinite_tensors = 0;
  TensorSink sink;                             // compare: every tensor reached
  std::optional<std::int64_t> save_max_bytes;  // capture --save
  std::vector<std::pair<std::string, at::Tensor>> saved;
  std::int64_t saved_bytes = 0;
  std::int64_t unsaved_tensors = 0;
  void forget_pending_calls() {
    for (ModuleCalls& m : modules) m.pending.clear();
  }

 private:
  // One depth-first walk over an input or an output (docs/capture.md, "Call indices and walks").
  struct Walk {
    const std::string* module_path;
    std::int64_t call_index;
    Direction direction;
    std::int64_t nodes = 0;
    bool exhausted = false;
    std::vector<std::string> path;
  };
  // A call of `module` begins: its call index, kept until the call ends.
  static std::int64_t open_call(ModuleCalls& module) {
    const std::int64_t index = module.next_index++;
    module.pending.push_back(index);
    return index;
  }
  // The call of `module` that ends now (the innermost open one), if any.
  static std::optional<std::int64_t> close_call(ModuleCalls& module) {
    if (module.pending.empty()) return std::nullopt;
    const std::int64_t index = module.pending.back();
    module.pending.pop_back();
    return index;
  }
  void begin_input(const std::string& path, std::int64_t call_index,
                   const std::vector<c10::IValue>& args,
                   const std::vector<std::pair<std::string, c10::IValue>>& kwargs);
  void begin_output(const std::string& path, std::int64_t call_index, const c10::IValue& output);
  void visit(Walk& walk, const c10::IValue& value, std::int64_t depth);
  void visit_children(Walk& walk, const c10::IValue& value, std::int64_t depth);
  void record(Walk& walk, const at::Tensor& tensor);
  void save(const Walk& walk, const at::Tensor& tensor);
  // snapshots are taken until a quota stops them
  bool recording() const { return active && !stopped_by; }
  // walks go on past the snapshot quotas when every tensor is checked for non-finite values,
  // or handed to a sink
  bool walking() const { return active && (!stopped_by || with_stats || sink); }
};

namespace {

constexpr const char* kObserveSchema =
    "vin::observe(int capture, Any module, int side, Any value) -> ()";
constexpr std::int64_t kInputSide = 0;
constexpr std::int64_t kOutputSide = 1;
// at a call through a module interface: observed there only when the module it reaches does
// not observe itself (its type is not among the callee-instrumented ones)
constexpr std::int64_t kInterfaceInputSide = 2;
constexpr std::int64_t kInterfaceOutputSide = 3;

// Live captures by id. A capture unregisters itself before it is destroyed, so an observer
// running in a graph that outlives it finds nothing and does nothing.
class Registry {
 public:
  static Registry& instance() {
    static Registry registry;
    return registry;
  }
  std::int64_t add(ModelCapture::State* state) {
    std::lock_guard<std::mutex> lock(mutex_);
    const std::int64_t id = next_id_++;
    states_[id] = state;
    return id;
  }
  void remove(std::int64_t id) {
    std::lock_guard<std::mutex> lock(mutex_);
    states_.erase(id);
  }
  void observe(std::int64_t id, const c10::IValue& module, std::int64_t side,
               const c10::IValue& value) {
    // Held while observing: a capture cannot be destroyed under a running observer.
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = states_.find(id);
    if (it != states_.end()) it->second->observe(module, side, value);
  }

 private:
  std::mutex mutex_;
  std::int64_t next_id_ = 1;
  std::unordered_map<std::int64_t, ModelCapture::State*> states_;
};

// The operator, moved (never copied) into the registration: GCC 14 reports a false
// maybe-uninitialized inside torch::jit::Operator's copy constructor (a std::variant of
// std::function), which -Werror would make an error.
std::vector<c10::optional<torch::jit::Operator>> observer_operator() {
  std::vector<c10::optional<torch::jit::Operator>> operators;
  // CONSERVATIVE alias analysis marks the operator as having side effects, so dead-code
  // elimination and the graph optimiser keep it where it was put.
  operators.emplace_back(torch::jit::Operator(
      kObserveSchema,
      [](torch::jit::Stack& stack) {
        c10::IValue value = torch::jit::pop(stack);
        const std::int64_t side = torch::jit::pop(stack).toInt();
        c10::IValue module = torch::jit::pop(stack);
        const std::int64_t id = torch::jit::pop(stack).toInt();
        Registry::instance().observe(id, module, side, value);
      },
      c10::AliasAnalysisKind::CONSERVATIVE));
  return operators;
}

void register_observer_once() {
  static const torch::jit::RegisterOperators registration(observer_operator());
}

// Names under which a module's forward is called (docs/capture.md, "Which calls are invocations"):
// `forward`; its TorchScript overloads `forward__0`, `forward__1`, ... (scripted nn.LSTM, nn.GRU,
// any
// @torch.jit._overload_method forward); and torch.jit.trace's repeats `forward1`, `forward2`, ...
// (the second and later calls of one module within one traced forward).
bool is_forward_name(std::string_view name) {
  constexpr std::string_view kForward = "forward";
  if (name.substr(0, kForward.size()) != kForward) return false;
  std::string_view number = name.substr(kForward.size());
  if (number.empty()) return true;
  if (number.substr(0, 2) == "__")
    number.remove_prefix(2);  // an overload: forward__0, forward__1, ...
  else if (number[0] == '0')
    return false;  // a traced repeat: forward1, forward2, ...
  return !number.empty() &&
         std::all_of(number.begin(), number.end(), [](char c) { return c >= '0' && c <= '9'; });
}

bool is_module_call(const torch::jit::Node* node) {
  if (node->kind() != c10::prim::CallMethod || !is_forward_name(node->s(c10::attr::name)))
    return false;
  const c10::TypePtr& callee = node->input(0)->type();
  if (const auto cls = callee->cast<c10::ClassType>()) return cls->is_module();
  if (const auto iface = callee->cast<c10::InterfaceType>()) return iface->is_module();
  return false;
}

void collect_module_calls(torch::jit::Block* block, std::vector<torch::jit::Node*>& calls,
                          std::unordered_set<torch::jit::Graph*>& graphs_seen);

void collect_in_graph(torch::jit::Graph& graph, std::vector<torch::jit::Node*>& calls,
                      std::unordered_set<torch::jit::Graph*>& graphs_seen) {
  if (!graphs_seen.insert(&graph).second) return;
  collect_module_calls(graph.block(), calls, graphs_seen);
}

void collect_module_calls(torch::jit::Block* block, std::vector<torch::jit::Node*>& calls,
                          std::unordered_set<torch::jit::Graph*>& graphs_seen) {
  for (torch::jit::Node* node : block->nodes()) {
    if (is_module_call(node)) calls.push_back(node);
    for (torch::jit::Block* inner : node->blocks()) collect_module_calls(inner, calls, graphs_seen);
    // fork() bodies are subgraphs, not blocks
    if (node->hasAttribute(c10::attr::Subgraph))
      collect_in_graph(*node->g(c10::attr::Subgraph), calls, graphs_seen);
  }
}

// The constants every observer of one graph passes: the capture's id and the sides, made once
// per graph at its top (which dominates every block), not once per call.
struct ObserverConstants {
  torch::jit::Value* id;
  std::array<torch::jit::Value*, 4> sides;  // kInputSide ... kInterfaceOutputSide
};

ObserverConstants make_observer_constants(torch::jit::Graph& graph, std::int64_t id) {
  torch::jit::WithInsertPoint top(graph.block()->nodes().front());
  ObserverConstants constants{graph.insertConstant(id), {}};
  for (std::int64_t side = 0; side < 4; ++side)
    constants.sides[static_cast<std::size_t>(side)] = graph.insertConstant(side);
  return constants;
}

void insert_observer(torch::jit::Graph& graph, const ObserverConstants& constants,
                     torch::jit::Value* module, std::int64_t side, torch::jit::Value* value) {
  graph.insertNode(graph.create(
      c10::Symbol::fromQualString("vin::observe"),
      {constants.id, module, constants.sides[static_cast<std::size_t>(side)], value}, 0));
}

// The scripted forward hooks TorchScript emitted behind `call` as
// `prim::CallFunction(hook, callee, input_tuple, output)`, found through the uses of the call's
// output (and of each non-None hook result, which the next hook gets), so the work grows with
// the call's uses, not with the rest of the graph.
bool is_forward_hook_of(const torch::jit::Node* node, const torch::jit::Value* callee,
                        const torch::jit::Value* output) {
  return node->kind() == c10::prim::CallFunction && node->inputs().size() == 4 &&
         node->input(1) == callee && node->input(3) == output;
}

// At a call site: its arguments before the `prim::CallMethod forward`, and after it the output
// that the caller finally gets, i.e. after the scripted forward hooks.
void instrument_call(torch::jit::Node* call, const ObserverConstants& constants,
                     std::int64_t input_side, std::int64_t output_side) {
  torch::jit::Graph& graph = *call->owningGraph();
  torch::jit::Value* callee = call->input(0);
  {
    torch::jit::WithInsertPoint before(call);
    std::vector<torch::jit::Value*> args(call->inputs().begin() + 1, call->inputs().end());
    torch::jit::Value* tuple = graph.insertNode(graph.createTuple(args))->output();
    insert_observer(graph, constants, callee, input_side, tuple);
  }
  torch::jit::Node* last = call;
  torch::jit::Value* output = call->output();
  for (bool more = true; more;) {
    more = false;
    torch::jit::Value* next_output = nullptr;
    for (const torch::jit::Use& use : output->uses()) {
      torch::jit::Node* hook = use.user;
      if (hook->owningBlock() != call->owningBlock() || !hook->isAfter(call) ||
          !is_forward_hook_of(hook, callee, output))
        continue;
      if (hook->isAfter(last)) last = hook;
      if (hook->outputs().size() == 1 && hook->output()->type()->kind() != c10::TypeKind::NoneType)
        next_output = hook->output();
    }
    if (next_output) {
      output = next_output;
      more = true;
    }
  }
  torch::jit::WithInsertPoint after(last->next());
  insert_observer(graph, constants, callee, output_side, output);
}

// In the callee: a forward-named method's own graph observes `self` with its arguments first and
// its return value last, once for every instance of the type and every call site.
void instrument_callee(torch::jit::Graph& graph, const ObserverConstants& constants) {
  torch::jit::Value* self = graph.inputs()[0];
  {
    // right behind the constants (made at the top), before the method's own first node
    torch::jit::WithInsertPoint top(constants.sides.back()->node()->next());
    std::vector<torch::jit::Value*> args(graph.inputs().begin() + 1, graph.inputs().end());
    torch::jit::Value* tuple = graph.insertNode(graph.createTuple(args))->output();
    insert_observer(graph, constants, self, kInputSide, tuple);
  }
  torch::jit::WithInsertPoint end(graph.return_node());
  insert_observer(graph, constants, self, kOutputSide, graph.outputs()[0]);
}

// Puts the observers into every graph that needs them, each graph once (instances of a type
// share graphs), and returns the module types that observe themselves:
//  - a module type's forward-named methods observe their own calls (instrument_callee), so a type
//    called from 5,000 places is instrumented once and the callers' graphs stay as they were;
//  - except the root's (ModelCapture::forward observes the root) and types with scripted forward
//    hooks, whose caller gets the output only after the hooks: their calls are observed at each
//    call site (instrument_call), as are calls through a module interface (which reach either
//    kind; the observer skips those that reach a type observing itself).
std::unordered_set<const c10::ClassType*> instrument_module(torch::jit::Module& module,
                                                            std::int64_t id) {
  std::vector<c10::ClassTypePtr> types;
  std::unordered_set<const c10::ClassType*> types_seen;
  for (const auto& m : module.modules())
    if (types_seen.insert(m.type().get()).second) types.push_back(m.type());
  std::unordered_set<torch::jit::Graph*> graphs_seen;
  std::vector<torch::jit::Node*> calls;
  for (const auto& type : types)
    for (torch::jit::Function* fn : type->methods())
      if (auto* graph_fn = dynamic_cast<torch::jit::GraphFunction*>(fn))
        collect_in_graph(*graph_fn->graph(), calls, graphs_seen);

  std::unordered_map<torch::jit::Graph*, ObserverConstants> constants;
  auto constants_of = [&](torch::jit::Graph& graph) -> const ObserverConstants& {
    auto it = constants.find(&graph);
    if (it == constants.end())
      it = constants.emplace(&graph, make_observer_constants(graph, id)).first;
    return it->second;
  };
  // types with scripted forward hooks, told by the hook calls TorchScript emitted behind their
  // call sites: the one sign both a clone (whose types have lost their hook lists) and the
  // module itself carry; a hooked type reached only through interfaces runs no hooks, so it may
  // observe itself
  std::unordered_set<const c10::ClassType*> hooked;
  for (torch::jit::Node* call : calls)
    for (const torch::jit::Use& use : call->output()->uses())
      if (is_forward_hook_of(use.user, call->input(0), call->output()))
        if (const auto cls = call->input(0)->type()->cast<c10::ClassType>())
          hooked.insert(cls.get());
  std::unordered_set<const c10::ClassType*> observing_themselves;
  for (const auto& type : types) {
    if (type == module.type() || hooked.count(type.get())) continue;
    observing_themselves.insert(type.get());
    for (torch::jit::Function* fn : type->methods())
      if (auto* graph_fn = dynamic_cast<torch::jit::GraphFunction*>(fn);
          graph_fn && is_forward_name(fn->name())) {
        torch::jit::Graph& graph = *graph_fn->graph();
        instrument_callee(graph, constants_of(graph));
      }
  }
  for (torch::jit::Node* call : calls) {
    const c10::TypePtr& callee = call->input(0)->type();
    if (callee->cast<c10::InterfaceType>())
      instrument_call(call, constants_of(*call->owningGraph()), kInterfaceInputSide,
                      kInterfaceOutputSide);
    else if (const auto cls = callee->cast<c10::ClassType>();
             !observing_themselves.count(cls.get()))
      instrument_call(call, constants_of(*call->owningGraph()), kInputSide, kOutputSide);
  }
  return observing_themselves;
}

std::string dict_key_text(const c10::IValue& key) {
  if (key.isString()) return key.toStringRef();
  if (key.isInt()) return std::to_string(key.toInt());
  if (key.isBool()) return key.toBool() ? "True" : "False";
  std::ostringstream out;
  out << key;
  return out.str();
}

}  // namespace

ModelCapture::State::State(const torch::jit::Module& model,
                           std::optional<std::vector<std::string>> paths, CaptureLimits quota,
                           bool in_place)
    : original(model), requested_paths(std::move(paths)), limits(quota) {
  register_observer_once();
  // clone(inplace): the clone shares parameters and buffers with the caller's module (no
  // copies); its class types and graphs are new, so instrumenting them leaves the caller's
  // untouched. In place, the module's own graphs are instrumented (no clone to make).
  instrumented = in_place ? model : model.clone(/*inplace=*/true);
  id = Registry::instance().add(this);
  observing_themselves = instrument_module(instrumented, id);
  for (const auto& item : instrumented.named_modules()) {
    const std::string path = item.name.empty() ? kRootPath : item.name;
    if (module_of.emplace(item.value._ivalue().get(), modules.size()).second) {
      modules.emplace_back().path = path;
      all_paths.push_back(path);
    }
  }
}

ModelCapture::State::~State() { Registry::instance().remove(id); }

void ModelCapture::State::observe(const c10::IValue& module, std::int64_t side,
                                  const c10::IValue& value) {
  if (!module.isObject()) return;
  if (side == kInterfaceInputSide || side == kInterfaceOutputSide) {
    // a call through an interface: the module's own graphs observed it if its type does so
    if (observing_themselves.count(module.toObject()->type().get())) return;
    side = side == kInterfaceInputSide ? kInputSide : kOutputSide;
  }
  std::lock_guard<std::mutex> lock(mutex);
  check_deadline();
  if (!active) return;
  const auto it = module_of.find(module.toObject().get());
  if (it == module_of.end()) return;
  ModuleCalls& calls = modules[it->second];
  if (!calls.selected) return;
  const std::string& path = calls.path;
  if (side == kInputSide) {
    const std::int64_t index = open_call(calls);
    // calls between modules inside TorchScript are positional: everything is under "args"
    if (walking()) {
      std::vector<c10::IValue> args;
      if (value.isTuple()) args = value.toTupleRef().elements().vec();
      begin_input(path, index, args, {});
    }
  } else if (const auto index = close_call(calls); index && walking()) {
    begin_output(path, *index, value);
  }
}

void ModelCapture::State::observe_root_input(
    const std::vector<c10::IValue>& args,
    const std::vector<std::pair<std::string, c10::IValue>>& kwargs) {
  std::lock_guard<std::mutex> lock(mutex);
  check_deadline();
  if (!active || !modules.front().selected) return;
  const std::int64_t index = open_call(modules.front());
  if (walking()) begin_input(modules.front().path, index, args, kwargs);
}

void ModelCapture::State::observe_root_output(const c10::IValue& output) {
  std::lock_guard<std::mutex> lock(mutex);
  if (!active || !modules.front().selected) return;
  if (const auto index = close_call(modules.front()); index && walking())
    begin_output(modules.front().path, *index, output);
}

bool ModelCapture::State::checked_nonfinite(const at::Tensor& tensor) {
  const bool versioned = !tensor.is_inference();  // inference tensors have no version counter
  const std::int64_t version = versioned ? tensor._version() : 0;
  if (versioned)
    for (const Checked& c : recently_checked)
      if (c.tensor.defined() && c.tensor.unsafeGetTensorImpl() == tensor.unsafeGetTensorImpl() &&
          c.version == version)
        return c.nonfinite;
  const bool nonfinite = has_nonfinite(tensor);
  if (versioned) {
    recently_checked[next_checked] = Checked{tensor, version, nonfinite};
    next_checked = (next_checked + 1) % recently_checked.size();
  }
  return nonfinite;
}

void ModelCapture::State::check_deadline() {
  if (!deadline || std::chrono::steady_clock::now() < *deadline) return;
  timed_out = true;
  // the interpreter re-raises this as its own error; timed_out tells the caller what it was
  throw Error("the forward ran past its time limit");
}

void ModelCapture::State::begin_input(
    const std::string& path, std::int64_t call_index, const std::vector<c10::IValue>& args,
    const std::vector<std::pair<std::string, c10::IValue>>& kwargs) {
  // the positional root is always visited, even when empty; the keyword root only when not
  Walk walk{&path, call_index, Direction::input, 0, false, {"args"}};
  visit(walk, c10::ivalue::Tuple::create(args), 0);
  if (!kwargs.empty() && !walk.exhausted) {
    walk.path = {"kwargs"};
    c10::impl::GenericDict dict(c10::StringType::get(), c10::AnyType::get());
    for (const auto& [name, value] : kwargs) dict.insert(name, value);
    visit(walk, dict, 0);
  }
}

void ModelCapture::State::begin_output(const std::string& path, std::int64_t call_index,
                                       const c10::IValue& output) {
  Walk walk{&path, call_index, Direction::output, 0, false, {"output"}};
  visit(walk, output, 0);
}

void ModelCapture::State::visit(Walk& walk, const c10::IValue& value, std::int64_t depth) {
  if (walk.exhausted || !walking()) return;
  ++walk.nodes;
  if (value.isTensor()) {
    // capture never changes whether a forward succeeds (docs/capture.md): a tensor this code
    // cannot read is left out, with a warning, instead of failing the model's forward
    try {
      record(walk, value.toTensor());
    } catch (const std::exception& e) {
      std::string where = *walk.module_path + " " + to_string(walk.direction);
      for (const auto& key : walk.path) where += "." + key;
      log_line(LogLevel::warn,
               "capture: left out a tensor of " + where + ": " + describe_torch_error(e));
    }
  }
  // the node that reaches the limit is still handled; then this walk stops
  if (walk.nodes >= limits.max_traversal_nodes()) {
    walk.exhausted = true;
    return;
  }
  if (depth < limits.max_container_depth()) visit_children(walk, value, depth);
}

void ModelCapture::State::visit_children(Walk& walk, const c10::IValue& value, std::int64_t depth) {
  auto visit_item = [&](const std::string& key, const c10::IValue& item) {
    walk.path.push_back(key);
    visit(walk, item, depth + 1);
    walk.path.pop_back();
  };
  if (value.isTuple()) {
    const auto& elements = value.toTupleRef().elements();
    for (std::size_t i = 0; i < elements.size() && !walk.exhausted; ++i)
      visit_item(std::to_string(i), elements[i]);
  } else if (value.isList()) {
    const auto list = value.toListRef();
    for (std::size_t i = 0; i < list.size() && !walk.exhausted; ++i)
      visit_item(std::to_string(i), list[i]);
  } else if (value.isGenericDict()) {
    for (const auto& entry : value.toGenericDict()) {
      if (walk.exhausted) break;
      visit_item(dict_key_text(entry.key()), entry.value());
    }
  }
}

void ModelCapture::State::record(Walk& walk, const at::Tensor& tensor) {
  if (!tensor.defined()) return;
  if (sink) {
    sink(TensorKey{*walk.module_path, walk.call_index, walk.direction, walk.path}, tensor);
    return;
  }
  const bool keep = recording();
  std::optional<TensorStats> stats;
  bool nonfinite = false;
  if (with_stats) {
    ++checked_tensors;
    // a kept snapshot's statistics tell; other tensors get the check alone
    if (keep) stats = tensor_stats(tensor);
    // (metadata-only snapshots have no statistics: nested tensors are checked all the same)
    nonfinite = stats && !stats->entries.empty() ? stats->nonfinite : checked_nonfinite(tensor);
    if (nonfinite) {
      ++nonfinite_tensors;
      if (!first_nonfinite)
        first_nonfinite =
            SnapshotLocation{*walk.module_path, walk.call_index, walk.direction, walk.path, keep};
    }
  }
  if (!keep) return;
  const auto reason = sample_omission_reason(tensor);
  TensorSample sample;
  if (!reason)
    sample =
        sample_tensor(tensor, limits.max_samples_per_tensor(), limits.max_bytes() - sampled_bytes);
  auto [shape, numel] = snapshot_shape(tensor);
  snapshots.emplace_back(*walk.module_path, walk.call_index, walk.direction, walk.path,
                         std::move(shape), python_dtype_name(tensor.scalar_type()),
                         tensor.device().str(), numel, sample.sampled_bytes,
                         std::move(sample.values), reason, std::move(stats));
  sampled_bytes += sample.sampled_bytes;
  if (save_max_bytes) save(walk, tensor);
  if (static_cast<std::int64_t>(snapshots.size()) >= limits.max_tensors())
    stopped_by = "max_tensors";
  else if (sampled_bytes >= limits.max_bytes())
    stopped_by = "max_bytes";
}

void ModelCapture::State::save(const Walk& walk, const at::Tensor& tensor) {
  // metadata-only tensors are not saved, nor counted as unsaved: they have no values
  if (tensor.is_nested() || tensor.layout() != c10::kStrided || tensor.is_meta()) return;
  const std::int64_t bytes = tensor.numel() * saved_element_size(tensor);
  if (saved_bytes + bytes > *save_max_bytes ||
      static_cast<std::int64_t>(saved.size()) >= kMaxSaveTensors) {
    ++unsaved_tensors;
    return;
  }
  std::optional<at::Tensor> copy = whole_copy(tensor);
  if (!copy) return;
  if (!npy_descr(copy->scalar_type())) {  // LibTorch 2's uint16/32/64: no numpy type here
    ++unsaved_tensors;
    return;
  }
  std::string name =
      *walk.module_path + "/" + std::to_string(walk.call_index) + "/" + to_string(walk.direction);
  for (const auto& key : walk.path) name += "/" + key;
  saved_bytes += static_cast<std::int64_t>(copy->nbytes());
  saved.emplace_back(std::move(name), std::move(*copy));
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
  State& s = *state_;
  std::unordered_set<std::string> selected;
  if (s.requested_paths) {
    for (auto& path : select_module_paths(*s.requested_paths, s.all_paths))
      selected.insert(std::move(path));
  } else {
    selected.insert(s.all_paths.begin(), s.all_paths.end());
  }
  std::lock_guard<std::mutex> lock(s.mutex);
  if (s.active) throw UsageError("this capture is already active");
  for (State::ModuleCalls& m : s.modules) m.selected = selected.count(m.path) > 0;
  s.active = true;
  return Scope(this);
}

void ModelCapture::enable_stats(bool on) {
  std::lock_guard<std::mutex> lock(state_->mutex);
  state_->with_stats = on;
}

void ModelCapture::close() {
  std::lock_guard<std::mutex> lock(state_->mutex);
  state_->recently_checked = {};
  state_->active = false;
  state_->forget_pending_calls();
}

c10::IValue ModelCapture::forward(const ForwardInputs& inputs) {
  State& s = *state_;
  std::vector<c10::IValue> args = inputs.args;
  // Module::operator() order: pre-hooks (which see positional arguments only), forward, hooks.
  // The clone's class type has no hooks of its own; they are the caller's module's, typed for
  // its class, so they run through Function::run, which does not check argument types (the
  // clone has the same slots), with the clone as `self` so that the caller's module is not
  // touched.
  const c10::IValue self(s.instrumented._ivalue());
  auto run_hook = [&self](torch::jit::Function* hook, std::vector<c10::IValue> extra) {
    torch::jit::Stack stack{self};
    for (auto& v : extra) stack.push_back(std::move(v));
    hook->run(stack);
    return stack.empty() ? c10::IValue() : stack.back();
  };
  for (torch::jit::Function* hook : s.original.type()->getForwardPreHooks()) {
    c10::IValue result = run_hook(hook, {c10::ivalue::Tuple::create(args)});
    if (result.isNone()) continue;
    args = result.isTuple() ? result.toTupleRef().elements().vec() : std::vector{result};
  }
  s.observe_root_input(args, inputs.kwargs);
  torch::jit::Kwargs kwargs(inputs.kwargs.begin(), inputs.kwargs.end());
  c10::IValue output;
  try {
    output = s.instrumented.get_method(inputs.method)(args, kwargs);
    for (torch::jit::Function* hook : s.original.type()->getForwardHooks()) {
      c10::IValue result = run_hook(hook, {c10::ivalue::Tuple::create(args), output});
      if (!result.isNone()) output = result;
    }
  } catch (...) {
    // invocations the exception aborted get no output record
    std::lock_guard<std::mutex> lock(s.mutex);
    s.forget_pending_calls();
    throw;
  }
  s.observe_root_output(output);
  return output;
}

void ModelCapture::set_deadline(std::optional<std::chrono::steady_clock::time_point> deadline) {
  std::lock_guard<std::mutex> lock(state_->mutex);
  state_->deadline = deadline;
}

bool ModelCapture::timed_out() const {
  std::lock_guard<std::mutex> lock(state_->mutex);
  return state_->timed_out;
}

std::optional<std::pair<std::vector<TensorSnapshot>, CaptureSummary>> ModelCapture::copy_when_idle(
    std::chrono::milliseconds patience) const {
  const auto until = std::chrono::steady_clock::now() + patience;
  std::unique_lock<std::mutex> lock(state_->mutex, std::defer_lock);
  while (!lock.try_lock()) {
    if (std::chrono::steady_clock::now() >= until) return std::nullopt;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return std::make_pair(state_->snapshots, state_->summarize());
}

const std::vector<TensorSnapshot>& ModelCapture::snapshots() const { return state_->snapshots; }
std::int64_t ModelCapture::sampled_bytes() const { return state_->sampled_bytes; }
bool ModelCapture::active() const { return state_->active; }
std::optional<std::string> ModelCapture::stopped_by() const { return state_->stopped_by; }
const CaptureLimits& ModelCapture::limits() const { return state_->limits; }

CaptureSummary ModelCapture::State::summarize() const {
  CaptureSummary summary;
  summary.snapshots = static_cast<std::int64_t>(snapshots.size());
  summary.sampled_bytes = sampled_bytes;
  summary.stopped_by = stopped_by;
  summary.with_stats = with_stats;
  summary.first_nonfinite = first_nonfinite;
  summary.checked_tensors = checked_tensors;
  summary.nonfinite_tensors = nonfinite_tensors;
  if (save_max_bytes)
    summary.saved = CaptureSummary::Saved{static_cast<std::int64_t>(saved.size()), saved_bytes,
                                          unsaved_tensors};
  return summary;
}

void ModelCapture::set_tensor_sink(TensorSink sink) {
  std::lock_guard<std::mutex> lock(state_->mutex);
  state_->sink = std::move(sink);
}

void ModelCapture::enable_saving(std::int64_t max_bytes) {
  std::lock_guard<std::mutex> lock(state_->mutex);
  state_->save_max_bytes = max_bytes;
}

const std::vector<std::pair<std::string, at::Tensor>>& ModelCapture::saved_tensors() const {
  return state_->saved;
}

CaptureSummary ModelCapture::summary() const {
  std::lock_guard<std::mutex> lock(state_->mutex);
  return state_->summarize();
}

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
