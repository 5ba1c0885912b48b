#include "vin/diagnostics/instrument/autocast_blocks.h"

#include <torch/csrc/jit/api/function_impl.h>
#include <torch/csrc/jit/ir/ir.h>
#include <torch/csrc/jit/passes/autocast.h>
#include <torch/csrc/jit/runtime/custom_operator.h>
#include <torch/csrc/jit/runtime/graph_executor.h>

#include <memory>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "vin/diagnostics/instrument/graph_instrumentation.h"
#include "vin/diagnostics/torch/autocast_scope.h"

namespace vin::diagnostics {
namespace {

constexpr const char* kEnterSchema = "vin::autocast_enter(Any context) -> ()";
constexpr const char* kExitSchema = "vin::autocast_exit(Any context) -> ()";

// The scopes the marked blocks opened on this thread, innermost last: an entry is null where
// the block ran optimised (nothing to undo).
thread_local std::vector<std::unique_ptr<AutocastScope>> open_scopes;

// torch.autocast's class as TorchScript compiles it (torch.amp, and the torch.cuda.amp /
// torch.cpu.amp subclasses, which set the same attributes)
bool is_autocast_class(const c10::TypePtr& type) {
  const auto cls = type->cast<c10::ClassType>();
  if (!cls || !cls->name()) return false;
  constexpr std::string_view kName = "autocast_mode.autocast";
  const std::string name = cls->name()->qualifiedName();
  return name.size() >= kName.size() &&
         std::string_view(name).substr(name.size() - kName.size()) == kName;
}

// torch.autocast's settings from the scripted object's attributes (its scripted __init__ sets
// device, fast_dtype and _enabled; _cache_enabled where it has one)
AutocastSettings settings_of(const c10::IValue& context) {
  const auto object = context.toObject();
  const auto attribute = [&](const char* name) -> c10::IValue {
    return object->type()->hasAttribute(name) ? object->getAttr(name) : c10::IValue();
  };
  AutocastSettings settings;
  settings.device = c10::Device(attribute("device").toStringRef()).type();
  const c10::IValue enabled = attribute("_enabled");
  settings.enabled = enabled.isBool() && enabled.toBool();
  const c10::IValue dtype = attribute("fast_dtype");
  if (dtype.isInt()) settings.dtype = static_cast<c10::ScalarType>(dtype.toInt());
  const c10::IValue cache = attribute("_cache_enabled");
  if (cache.isBool()) settings.cache_enabled = cache.toBool();
  return settings;
}

// TorchScript's own pass lowers the block where the run is optimised and JIT autocast is on
bool lowered_by_torchscript() {
  return torch::jit::getGraphExecutorOptimize() && torch::jit::autocastEnabled();
}

std::vector<c10::optional<torch::jit::Operator>> block_operators() {
  std::vector<c10::optional<torch::jit::Operator>> operators;
  // CONSERVATIVE: side effects, so neither dead-code elimination nor reordering moves them
  operators.emplace_back(torch::jit::Operator(
      kEnterSchema,
      [](torch::jit::Stack& stack) {
        const c10::IValue context = torch::jit::pop(stack);
        open_scopes.push_back(lowered_by_torchscript()
                                  ? nullptr
                                  : std::make_unique<AutocastScope>(settings_of(context)));
      },
      c10::AliasAnalysisKind::CONSERVATIVE));
  operators.emplace_back(torch::jit::Operator(
      kExitSchema,
      [](torch::jit::Stack& stack) {
        torch::jit::pop(stack);
        if (!open_scopes.empty()) open_scopes.pop_back();
      },
      c10::AliasAnalysisKind::CONSERVATIVE));
  return operators;
}

void register_operators_once() {
  static const torch::jit::RegisterOperators registration(block_operators());
}

void mark_in_block(torch::jit::Block* block, std::size_t& marked) {
  for (torch::jit::Node* node : block->nodes()) {
    for (torch::jit::Block* inner : node->blocks()) mark_in_block(inner, marked);
    if (node->kind() != c10::prim::Enter || !is_autocast_class(node->input(0)->type())) continue;
    torch::jit::Value* context = node->input(0);
    torch::jit::Graph& graph = *node->owningGraph();
    // its prim::Exit: the one of the same context in the same block
    torch::jit::Node* exit = nullptr;
    for (torch::jit::Node* n = node->next(); n != block->return_node(); n = n->next())
      if (n->kind() == c10::prim::Exit && n->input(0) == context) {
        exit = n;
        break;
      }
    if (!exit) continue;
    {
      torch::jit::WithInsertPoint after_enter(node->next());
      graph.insert(c10::Symbol::fromQualString("vin::autocast_enter"), {context});
    }
    {
      torch::jit::WithInsertPoint before_exit(exit);
      graph.insert(c10::Symbol::fromQualString("vin::autocast_exit"), {context});
    }
    ++marked;
  }
}

}  // namespace

std::size_t mark_autocast_blocks(torch::jit::Module& module) {
  register_operators_once();
  std::size_t marked = 0;
  std::unordered_set<torch::jit::Graph*> seen;  // instances of a type share its graphs
  for (const auto& type : module_types(module))
    for (torch::jit::Function* fn : type->methods())
      if (auto* graph_fn = dynamic_cast<torch::jit::GraphFunction*>(fn))
        if (seen.insert(graph_fn->graph().get()).second)
          mark_in_block(graph_fn->graph()->block(), marked);
  return marked;
}

AutocastBlocksGuard::AutocastBlocksGuard() : depth_(open_scopes.size()) {}

AutocastBlocksGuard::~AutocastBlocksGuard() {
  while (open_scopes.size() > depth_) open_scopes.pop_back();
}

}  // namespace vin::diagnostics
