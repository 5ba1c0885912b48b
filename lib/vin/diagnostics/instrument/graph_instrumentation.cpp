#include "vin/diagnostics/instrument/graph_instrumentation.h"

#include <torch/csrc/jit/api/function_impl.h>
#include <torch/csrc/jit/ir/ir.h>
#include <torch/csrc/jit/runtime/custom_operator.h>

#include <algorithm>
#include <array>
#include <mutex>
#include <unordered_map>
#include <vector>

namespace vin::diagnostics {
namespace {

constexpr const char* kObserveSchema =
    "vin::observe(int capture, Any module, int side, Any value) -> ()";

// Live observers by id. An observer is unregistered before it is destroyed, so an observer
// operator running in a graph that outlives it finds nothing and does nothing.
class Registry {
 public:
  static Registry& instance() {
    static Registry registry;
    return registry;
  }
  std::int64_t add(GraphObserver* observer) {
    std::lock_guard<std::mutex> lock(mutex_);
    const std::int64_t id = next_id_++;
    observers_[id] = observer;
    return id;
  }
  void remove(std::int64_t id) {
    std::lock_guard<std::mutex> lock(mutex_);
    observers_.erase(id);
  }
  void observe(std::int64_t id, const c10::IValue& module, std::int64_t side,
               const c10::IValue& value) {
    // Held while observing: an observer cannot be destroyed under a running observation.
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = observers_.find(id);
    if (it != observers_.end()) it->second->observe(module, side, value);
  }

 private:
  std::mutex mutex_;
  std::int64_t next_id_ = 1;
  std::unordered_map<std::int64_t, GraphObserver*> observers_;
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
// any @torch.jit._overload_method forward); and torch.jit.trace's repeats `forward1`, `forward2`, ...
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

}  // namespace

std::int64_t register_observer(GraphObserver* observer) {
  register_observer_once();
  return Registry::instance().add(observer);
}

void unregister_observer(std::int64_t id) { Registry::instance().remove(id); }

// Puts the observers into every graph that needs them, each graph once (instances of a type
// share graphs), and returns the module types that observe themselves:
//  - a module type's forward-named methods observe their own calls (instrument_callee), so a type
//    called from 5,000 places is instrumented once and the callers' graphs stay as they were;
//  - except the root's (ModelCapture::forward observes the root) and types with scripted forward
//    hooks, whose caller gets the output only after the hooks: their calls are observed at each
//    call site (instrument_call), as are calls through a module interface (which reach either
//    kind; the observer skips those that reach a type observing itself).
std::vector<c10::ClassTypePtr> module_types(const torch::jit::Module& module) {
  std::vector<c10::ClassTypePtr> types;
  std::unordered_set<const c10::ClassType*> types_seen;
  for (const auto& m : module.modules())
    if (types_seen.insert(m.type().get()).second) types.push_back(m.type());
  return types;
}

std::unordered_set<const c10::ClassType*> instrument_module(torch::jit::Module& module,
                                                            std::int64_t id) {
  const std::vector<c10::ClassTypePtr> types = module_types(module);
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

}  // namespace vin::diagnostics
