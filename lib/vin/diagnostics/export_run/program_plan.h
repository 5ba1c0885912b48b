// An exported program planned for running (contract 12.1): every node's operator resolved in
// LibTorch's dispatcher before anything runs, its arguments matched to the operator's schema by
// name (defaults filled from the schema), each value of the graph given a slot, and the slots
// each node is the last to read. What the plan cannot run is refused here, naming the file,
// the node and the reason; the interpreter (program_runner) only executes it.
#pragma once

#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/core/ivalue.h>

#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "vin/diagnostics/export/export_program.h"
#include "vin/diagnostics/torch/autocast_scope.h"

namespace vin::diagnostics::export_run {

/// Where one argument's value comes from when its node runs.
struct ValueSource {
  enum class Kind {
    constant,              ///< `constant`, made when planned
    slot,                  ///< the value in `slot`
    wrapped_slot,          ///< a symbolic number in `slot` given to a Tensor argument
    tensor_list,           ///< Tensor[] of `slots`
    optional_tensor_list,  ///< Tensor?[] of `slots` (-1: None)
    int_list,              ///< int[] of `slots` (-1: the constant in `ints` at that place)
    real_list,             ///< float[] likewise, from `reals`
    bool_list,             ///< bool[] likewise, from `ints`
  };
  Kind kind = Kind::constant;
  c10::IValue constant;
  std::int32_t slot = -1;
  std::vector<std::int32_t> slots;
  std::vector<std::int64_t> ints;
  std::vector<double> reals;
};

/// Where one result goes: nowhere (an output nothing names), a slot, or each element of a
/// returned list into its slot.
struct OutputBinding {
  enum class Kind { skip, slot, list };
  Kind kind = Kind::skip;
  std::int32_t slot = -1;
  std::vector<std::int32_t> slots;
};

/// What a node does.
enum class Step {
  dispatch,         ///< an operator through the dispatcher
  python_operator,  ///< `_operator.add` and kin on symbolic numbers (python_operators.h)
  tensor_property,  ///< aten.sym_size.int, sym_numel, sym_stride.int, sym_storage_offset
  cond,             ///< torch.ops.higher_order.cond: graphs[0] or graphs[1] on the operands
  while_loop,       ///< while graphs[0](carried, extra): carried = graphs[1](carried, extra)
  set_grad,         ///< wrap_with_set_grad_enabled: graphs[0] with grad mode `flag`
  autocast,         ///< wrap_with_autocast: graphs[0] under `autocast`
};

struct Instruction {
  Step step = Step::dispatch;
  std::optional<c10::OperatorHandle> op;
  std::string name;  ///< python_operator's and tensor_property's operation
  std::vector<ValueSource> args;
  std::vector<OutputBinding> outputs;
  std::vector<std::size_t> graphs;
  /// cond and while_loop: how many of `args` are carried values (the rest are extra)
  std::size_t carried = 0;
  bool flag = false;
  AutocastSettings autocast;  ///< Step::autocast's torch.autocast arguments
  std::vector<std::int32_t> release;  ///< slots no later node reads: freed after this one
  std::size_t node = 0;               ///< its node in its graph
  /// nothing reads what it makes and it changes nothing (no mutable schema, some result): not
  /// run, as torch.export.unflatten drops it (its releases still happen)
  bool dead = false;
};

/// The slots `source` reads.
std::vector<std::int32_t> slots_read(const ValueSource& source);

struct GraphPlan {
  std::size_t slots = 0;
  std::vector<std::int32_t> inputs;  ///< each placeholder's slot (-1 for a constant one)
  std::vector<ValueSource> outputs;  ///< the graph's outputs, in order
  std::vector<Instruction> instructions;
  std::unordered_map<std::string, std::int32_t> slot_of;  ///< by the graph's value names
};

struct ProgramPlan {
  std::vector<GraphPlan> graphs;  ///< as ExportProgram's
};

/// Plans every graph of `program` to run on `device` (devices the program names as "cpu" are
/// the run's device: weights and inputs move there, and so must what the graph makes). Throws
/// Error naming the file, the node and the problem: an operator this LibTorch lacks (with its
/// version), arguments that do not fit its schema, a value used before any node defines it or
/// of the wrong kind, a higher-order operator or Python function this runner does not run.
ProgramPlan plan_program(const ExportProgram& program, const c10::Device& device);

}  // namespace vin::diagnostics::export_run
