// capture's JIT graph pass: the observer operator `vin::observe(int capture, Any module, int side,
// Any value)` and where it goes in a module's graphs (docs/capture.md, "How"). It records
// nothing itself: each observation goes, by the id instrumentation baked into the graphs, to the
// GraphObserver registered under that id (ModelCapture's recorder).
#pragma once

#include <torch/csrc/jit/api/module.h>

#include <cstdint>
#include <string_view>
#include <unordered_set>
#include <vector>

namespace vin::diagnostics {

/// Which side of a module call an observation is: its arguments, its output, or either at a call
/// through a module interface (observed there only when the module it reaches does not observe
/// itself: its type is not among those instrument_module returns).
inline constexpr std::int64_t kInputSide = 0;
inline constexpr std::int64_t kOutputSide = 1;
inline constexpr std::int64_t kInterfaceInputSide = 2;
inline constexpr std::int64_t kInterfaceOutputSide = 3;

/// What the observers in instrumented graphs call.
class GraphObserver {
 public:
  virtual ~GraphObserver() = default;
  /// `module` (the module object) is called with `value` (a tuple of its arguments) or returned
  /// `value`, as `side` says. May throw: the forward stops there.
  virtual void observe(const c10::IValue& module, std::int64_t side, const c10::IValue& value) = 0;
};

/// Registers `observer` (and the operator, once per process) under a new id for
/// instrument_module's graphs to call; unregister_observer before it is destroyed. An observer
/// in a graph that outlives its registration finds nothing and does nothing; one running holds
/// the registry, so unregistering waits for it.
std::int64_t register_observer(GraphObserver* observer);
void unregister_observer(std::int64_t id);

/// The class types of `module` and its submodules, each once, in named_modules() order.
std::vector<c10::ClassTypePtr> module_types(const torch::jit::Module& module);

/// Puts the observers calling `id` into every graph of `module` that needs them, each graph once
/// (instances of a type share graphs), and returns the module types that observe their own
/// calls (the others are observed at their call sites; the root is observed by its caller).
std::unordered_set<const c10::ClassType*> instrument_module(torch::jit::Module& module,
                                                            std::int64_t id);

}  // namespace vin::diagnostics
