#include "vin/diagnostics/export_run/program_plan.h"

#include <ATen/ScalarOps.h>
#include <torch/version.h>

#include <set>

#include "vin/diagnostics/export_run/python_operators.h"
#include "vin/diagnostics/records/error.h"
#include "vin/diagnostics/text/printable.h"
#include "vin/diagnostics/text/shape_spec.h"
#include "vin/diagnostics/torch/dtype_names.h"

namespace vin::diagnostics::export_run {
namespace {

using Kind = ProgramArgument::Kind;

constexpr std::string_view kHigherOrder = "torch.ops.higher_order.";

// what a slot holds, as far as the plan knows: a tensor, a symbolic number, or either (a graph's
// placeholder that a caller fills)
enum class SlotKind { tensor, number, any };

bool is_tensor_type(const c10::TypePtr& type) { return type->kind() == c10::TypeKind::TensorType; }

c10::TypePtr without_optional(const c10::TypePtr& type) {
  if (const auto optional = type->cast<c10::OptionalType>()) return optional->getElementType();
  return type;
}

bool is_optional(const c10::TypePtr& type) { return type->kind() == c10::TypeKind::OptionalType; }

// the schema's MemoryFormat and Layout numbering as LibTorch's
std::optional<std::int64_t> memory_format(std::int64_t schema) {
  switch (static_cast<SchemaMemoryFormat>(schema)) {
    case SchemaMemoryFormat::contiguous:
      return static_cast<std::int64_t>(c10::MemoryFormat::Contiguous);
    case SchemaMemoryFormat::channels_last:
      return static_cast<std::int64_t>(c10::MemoryFormat::ChannelsLast);
    case SchemaMemoryFormat::channels_last_3d:
      return static_cast<std::int64_t>(c10::MemoryFormat::ChannelsLast3d);
    case SchemaMemoryFormat::preserve:
      return static_cast<std::int64_t>(c10::MemoryFormat::Preserve);
    default:
      return std::nullopt;
  }
}

std::optional<std::int64_t> layout(std::int64_t schema) {
  switch (static_cast<SchemaLayout>(schema)) {
    case SchemaLayout::strided:
      return static_cast<std::int64_t>(c10::kStrided);
    case SchemaLayout::sparse_coo:
      return static_cast<std::int64_t>(c10::kSparse);
    case SchemaLayout::sparse_csr:
      return static_cast<std::int64_t>(c10::kSparseCsr);
    case SchemaLayout::mkldnn:
      return static_cast<std::int64_t>(c10::kMkldnn);
    default:
      return std::nullopt;
  }
}

// One graph being planned: its slots by name and what each holds.
class GraphPlanner {
 public:
  GraphPlanner(const ExportProgram& program, const c10::Device& device, std::size_t index)
      : program_(program), device_(device), graph_(program.graphs[index]) {}

  GraphPlan plan() {
    for (const ProgramArgument& input : graph_.inputs) {
      if (input.kind == Kind::tensor || input.kind == Kind::sym_int ||
          input.kind == Kind::sym_float || input.kind == Kind::sym_bool) {
        if (!input.names.empty() && input.names.front())
          out_.inputs.push_back(define(*input.names.front(),
                                       input.kind == Kind::tensor ? SlotKind::tensor
                                                                  : SlotKind::number,
                                       "a graph input"));
        else
          out_.inputs.push_back(-1);  // a constant symbolic placeholder
      } else {
        out_.inputs.push_back(-1);  // a constant input: the graph holds its value
      }
    }
    for (std::size_t i = 0; i < graph_.nodes.size(); ++i) out_.instructions.push_back(node(i));
    for (const ProgramArgument& output : graph_.outputs)
      out_.outputs.push_back(any_source(output, program_.entry + ": the graph's output"));
    mark_dead_nodes();
    release_dead_values();
    out_.slots = kinds_.size();
    return std::move(out_);
  }

 private:
  // the file, the node and its target, as every message names a node
  std::string label(const ProgramNode& node) const {
    const std::string target = node.name.find(node.target) == std::string::npos
                                   ? " (" + printable(node.target, 200) + ")"
                                   : "";
    return program_.file + ": " + node.name + target;
  }

  [[noreturn]] void refuse(const ProgramNode& node, const std::string& why) const {
    throw Error(label(node) + ": " + why);
  }

  std::int32_t define(const std::string& name, SlotKind kind, const std::string& where) {
    if (out_.slot_of.count(name))
      throw Error(program_.file + ": " + where + " defines the value " + printable(name, 100) +
                  " a second time");
    const auto slot = static_cast<std::int32_t>(kinds_.size());
    kinds_.push_back(kind);
    defined_at_.push_back(current_);
    out_.slot_of.emplace(name, slot);
    return slot;
  }

  std::int32_t use(const std::string& name, SlotKind wanted, const std::string& where) {
    const auto it = out_.slot_of.find(name);
    if (it == out_.slot_of.end())
      throw Error(where + " uses the value " + printable(name, 100) +
                  ", which nothing before it defines");
    const SlotKind held = kinds_[static_cast<std::size_t>(it->second)];
    if (held != SlotKind::any && wanted != SlotKind::any && held != wanted)
      throw Error(where + " uses " + printable(name, 100) + " as a " +
                  (wanted == SlotKind::tensor ? "tensor" : "number") + ", which it is not");
    reads_.emplace_back(it->second, current_);
    return it->second;
  }

  // A value for an argument whose type the plan does not know (a graph's output, a
  // higher-order operator's operand): tensors and symbols by slot, constants as they are.
  ValueSource any_source(const ProgramArgument& a, const std::string& where) {
    ValueSource s;
    switch (a.kind) {
      case Kind::tensor:
      case Kind::optional_tensor:
        if (a.names.empty() || !a.names.front()) return s;  // None
        s.kind = ValueSource::Kind::slot;
        s.slot = use(*a.names.front(), SlotKind::any, where);
        return s;
      case Kind::sym_int:
      case Kind::sym_float:
      case Kind::sym_bool:
        if (a.names.front()) {
          s.kind = ValueSource::Kind::slot;
          s.slot = use(*a.names.front(), SlotKind::any, where);
          return s;
        }
        break;
      default:
        break;
    }
    return typed_source(a, c10::AnyType::get(), where);
  }

  ValueSource list_source(const ProgramArgument& a, ValueSource::Kind kind,
                          const std::string& where) {
    ValueSource s;
    s.kind = kind;
    s.ints = a.ints;
    s.reals = a.reals;
    for (const auto& name : a.names)
      s.slots.push_back(name ? use(*name, kind == ValueSource::Kind::tensor_list ||
                                                  kind == ValueSource::Kind::optional_tensor_list
                                              ? SlotKind::tensor
                                              : SlotKind::number,
                                   where)
                             : -1);
    if (kind == ValueSource::Kind::int_list && s.ints.size() < s.slots.size())
      s.ints.resize(s.slots.size());
    if (kind == ValueSource::Kind::bool_list && s.ints.size() < s.slots.size())
      s.ints.resize(s.slots.size());
    if (kind == ValueSource::Kind::real_list && s.reals.size() < s.slots.size())
      s.reals.resize(s.slots.size());
    return s;
  }

  ValueSource constant(c10::IValue value) {
    ValueSource s;
    s.constant = std::move(value);
    return s;
  }

  // A number given to a Tensor argument: a wrapped-number tensor, as Python's argument parser
  // makes one (type promotion treats it as a Python scalar)
  ValueSource wrapped(const c10::Scalar& scalar) {
    return constant(at::native::wrapped_scalar_tensor(scalar));
  }

  // A value for an argument of schema type `type`.
  ValueSource typed_source(const ProgramArgument& a, const c10::TypePtr& type,
                           const std::string& where) {
    const c10::TypePtr inner = without_optional(type);
    const bool to_tensor = is_tensor_type(inner);
    const auto list_of = [&]() -> c10::TypePtr {
      if (const auto l = inner->cast<c10::ListType>()) return l->getElementType();
      return nullptr;
    };
    switch (a.kind) {
      case Kind::none:
        return constant(c10::IValue());
      case Kind::tensor:
      case Kind::optional_tensor:
        if (a.names.empty() || !a.names.front()) return constant(c10::IValue());
        {
          ValueSource s;
          s.kind = ValueSource::Kind::slot;
          s.slot = use(*a.names.front(), SlotKind::tensor, where);
          return s;
        }
      case Kind::tensors:
        return list_source(a, ValueSource::Kind::tensor_list, where);
      case Kind::optional_tensors: {
        const c10::TypePtr element = list_of();
        return list_source(a,
                           element && !is_optional(element) ? ValueSource::Kind::tensor_list
                                                            : ValueSource::Kind::optional_tensor_list,
                           where);
      }
      case Kind::integer:
        if (to_tensor) return wrapped(c10::Scalar(a.ints.front()));
        if (inner->kind() == c10::TypeKind::FloatType)
          return constant(static_cast<double>(a.ints.front()));
        return constant(a.ints.front());
      case Kind::real:
        if (to_tensor) return wrapped(c10::Scalar(a.reals.front()));
        return constant(a.reals.front());
      case Kind::boolean:
        if (to_tensor) return wrapped(c10::Scalar(a.ints.front() != 0));
        return constant(a.ints.front() != 0);
      case Kind::complex:
        return to_tensor ? wrapped(c10::Scalar(c10::complex<double>(a.reals[0], a.reals[1])))
                         : constant(c10::complex<double>(a.reals[0], a.reals[1]));
      case Kind::integers: {
        const c10::TypePtr element = list_of();
        if (element && element->kind() == c10::TypeKind::FloatType)
          return constant(c10::List<double>(std::vector<double>(a.ints.begin(), a.ints.end())));
        if (element && element->kind() == c10::TypeKind::BoolType) {
          c10::List<bool> bools;
          for (const std::int64_t n : a.ints) bools.push_back(n != 0);
          return constant(bools);
        }
        return constant(c10::List<std::int64_t>(a.ints));
      }
      case Kind::reals:
        return constant(c10::List<double>(a.reals));
      case Kind::booleans: {
        c10::List<bool> bools;
        for (const std::int64_t n : a.ints) bools.push_back(n != 0);
        return constant(bools);
      }
      case Kind::string:
        return constant(a.strings.front());
      case Kind::strings:
        return constant(c10::List<std::string>(a.strings));
      case Kind::sym_int:
      case Kind::sym_float:
      case Kind::sym_bool: {
        if (!a.names.front()) {  // a constant
          if (a.kind == Kind::sym_float)
            return to_tensor ? wrapped(c10::Scalar(a.reals.front())) : constant(a.reals.front());
          if (a.kind == Kind::sym_bool)
            return to_tensor ? wrapped(c10::Scalar(a.ints.front() != 0))
                             : constant(a.ints.front() != 0);
          return to_tensor ? wrapped(c10::Scalar(a.ints.front())) : constant(a.ints.front());
        }
        ValueSource s;
        s.kind = to_tensor ? ValueSource::Kind::wrapped_slot : ValueSource::Kind::slot;
        s.slot = use(*a.names.front(), SlotKind::number, where);
        return s;
      }
      case Kind::sym_ints:
        return list_source(a, ValueSource::Kind::int_list, where);
      case Kind::sym_floats:
        return list_source(a, ValueSource::Kind::real_list, where);
      case Kind::sym_bools:
        return list_source(a, ValueSource::Kind::bool_list, where);
      case Kind::scalar_type: {
        const auto type_of = scalar_type_of(*a.dtype);
        if (!type_of)
          throw Error(where + " names the dtype " + std::string(a.dtype->name) +
                      ", which LibTorch " TORCH_VERSION " has not");
        return constant(static_cast<std::int64_t>(*type_of));
      }
      case Kind::memory_format:
      case Kind::layout: {
        const auto value = a.kind == Kind::layout ? layout(a.ints.front())
                                                  : memory_format(a.ints.front());
        if (!value)
          throw Error(where + " gives the " +
                      std::string(a.kind == Kind::layout ? "layout " : "memory format ") +
                      std::to_string(a.ints.front()) + ", which this runner does not know");
        return constant(*value);
      }
      case Kind::device:
        return constant(device_of(a, where));
      case Kind::graph:
        throw Error(where + " gives a graph where the operator takes a value");
      case Kind::other:
        break;
    }
    throw Error(where + " gives an argument (" + a.variant + ") this runner does not pass");
  }

  // A device the program names: its own where it says "cpu" (the device it was exported on)
  // and the run is elsewhere, as torch.export's move_to_device_pass rewrites them
  c10::Device device_of(const ProgramArgument& a, const std::string& where) const {
    std::string text = a.strings.front();
    if (!a.ints.empty()) text += ":" + std::to_string(a.ints.front());
    try {
      const c10::Device named(text);
      if (named.is_cpu() && !device_.is_cpu()) return device_;
      return named;
    } catch (const std::exception&) {
      throw Error(where + " names the device " + printable(text, 100) +
                  ", which LibTorch " TORCH_VERSION " does not know");
    }
  }

  // A constant size a node allocates (aten.zeros, empty, full, ...): within the bound --shape
  // has, its product not overflowing, refused before anything runs. -1 is the size a view's
  // `size` keeps or infers (expand(x, [2, -1, -1]) as ViT's class token; view): left to the
  // operator, as is what a view does with the other sizes.
  void check_size(const ProgramNode& node, const ProgramArgument& size) const {
    std::uint64_t elements = 1;
    for (const std::int64_t n : size.ints) {
      if (n == -1) continue;
      if (n < 0) refuse(node, "allocates a tensor of a negative size");
      if (n != 0 && elements > kMaxShapeBytes / static_cast<std::uint64_t>(n))
        refuse(node, "allocates a tensor of more than " + std::to_string(kMaxShapeBytes) +
                         " elements, past the bound --shape has");
      elements *= static_cast<std::uint64_t>(n);
    }
  }

  Instruction node(std::size_t index);
  Instruction dispatch(const ProgramNode& node, Instruction out);
  Instruction higher_order(const ProgramNode& node, Instruction out);
  AutocastSettings autocast_settings(const ProgramNode& node,
                                     const std::vector<const ProgramArgument*>& values) const;
  void bind_outputs(const ProgramNode& node, Instruction& out,
                    const std::vector<c10::Argument>* returns);
  void release_dead_values();
  void mark_dead_nodes();

  const ExportProgram& program_;
  c10::Device device_;
  const ProgramGraph& graph_;
  GraphPlan out_;
  std::vector<SlotKind> kinds_;
  std::vector<std::pair<std::int32_t, std::size_t>> reads_;  // slot, instruction
  std::vector<std::size_t> defined_at_;                       // by slot: its instruction
  std::size_t current_ = 0;
};

Instruction GraphPlanner::node(std::size_t index) {
  const ProgramNode& node = graph_.nodes[index];
  current_ = index;
  Instruction out;
  out.node = index;
  if (node.target.rfind(kHigherOrder, 0) == 0) return higher_order(node, std::move(out));
  if (const auto property = tensor_property(node.target)) {
    out.step = Step::tensor_property;
    out.name = *property;
    for (const ProgramNode::Input& in : node.inputs)
      out.args.push_back(any_source(in.arg, label(node)));
    bind_outputs(node, out, nullptr);
    return out;
  }
  if (is_python_operator(node.target)) {
    out.step = Step::python_operator;
    out.name = node.target;
    for (const ProgramNode::Input& in : node.inputs)
      out.args.push_back(any_source(in.arg, label(node)));
    if (!python_operator_arity_fits(node.target, out.args.size()))
      refuse(node, "takes " + std::to_string(out.args.size()) + " arguments, which " +
                       node.target + " does not");
    bind_outputs(node, out, nullptr);
    return out;
  }
  return dispatch(node, std::move(out));
}

Instruction GraphPlanner::dispatch(const ProgramNode& node, Instruction out) {
  const auto name = operator_of_target(node.target);
  if (!name) refuse(node, "a target this runner does not run (neither torch.ops.* nor a Python "
                          "operator it knows)");
  if (const auto found =
          c10::Dispatcher::singleton().findOp(c10::OperatorName(name->first, name->second)))
    out.op = *found;
  if (!out.op)
    refuse(node, "LibTorch " TORCH_VERSION " has no operator " + name->first +
                     (name->second.empty() ? "" : "." + name->second) +
                     " (a custom operator's library can be given with --load-library)");
  const c10::FunctionSchema& schema = out.op->schema();
  std::unordered_map<std::string, const ProgramNode::Input*> named;
  std::vector<const ProgramNode::Input*> positional;
  for (const ProgramNode::Input& in : node.inputs) {
    if (in.name.empty())
      positional.push_back(&in);
    else if (!named.emplace(in.name, &in).second)
      refuse(node, "gives the argument " + printable(in.name, 100) + " twice");
  }
  std::size_t given = 0;
  for (std::size_t i = 0; i < schema.arguments().size(); ++i) {
    const c10::Argument& argument = schema.arguments()[i];
    const ProgramNode::Input* in = nullptr;
    if (const auto it = named.find(argument.name()); it != named.end()) {
      in = it->second;
      named.erase(it);
    } else if (i < positional.size()) {
      in = positional[i];
    }
    const std::string where = label(node) + "'s argument " + argument.name();
    if (in) {
      ++given;
      if (argument.name() == "size" && in->arg.kind == Kind::integers) check_size(node, in->arg);
      out.args.push_back(typed_source(in->arg, argument.type(), where));
    } else if (argument.default_value()) {
      out.args.push_back(constant(*argument.default_value()));
    } else if (is_optional(argument.type())) {
      out.args.push_back(constant(c10::IValue()));
    } else {
      refuse(node, "gives no argument " + argument.name() + ", which " + name->first +
                       " needs (" + printable(c10::toString(schema), 300) + ")");
    }
  }
  // an assertion of a newer torch checks more than an older LibTorch's: what this one's
  // schema does not take goes unchecked (torch 2.7 gave _assert_tensor_metadata device and
  // layout; LibTorch 1.13's checks sizes, strides and dtype)
  if (!named.empty() && schema.returns().empty() && name->first.rfind("aten::_assert", 0) == 0) {
    given += named.size();
    named.clear();
  }
  if (!named.empty() || given < node.inputs.size())
    refuse(node, "gives the argument " +
                     printable(named.empty() ? std::string("(positional)") : named.begin()->first,
                               100) +
                     ", which its operator does not take (" +
                     printable(c10::toString(schema), 300) + ")");
  bind_outputs(node, out, &schema.returns());
  return out;
}

Instruction GraphPlanner::higher_order(const ProgramNode& node, Instruction out) {
  const std::string op = node.target.substr(kHigherOrder.size());
  std::vector<std::size_t> graphs;
  std::vector<const ProgramArgument*> values;  // the rest, in order
  for (const ProgramNode::Input& in : node.inputs) {
    if (in.arg.kind == Kind::graph)
      graphs.push_back(in.arg.graph);
    else
      values.push_back(&in.arg);
  }
  // operands written as one list (as_tensors) or one by one
  const auto operands = [&](std::size_t from) {
    std::vector<ValueSource> sources;
    for (std::size_t i = from; i < values.size(); ++i) {
      const ProgramArgument& a = *values[i];
      if (a.kind == Kind::tensors || a.kind == Kind::sym_ints) {
        for (const auto& name : a.names) {
          ValueSource s;
          s.kind = ValueSource::Kind::slot;
          if (!name) refuse(node, "has an operand that is not a value");
          s.slot = use(*name, SlotKind::any, label(node));
          sources.push_back(std::move(s));
        }
      } else {
        sources.push_back(any_source(a, label(node)));
      }
    }
    return sources;
  };
  if (op == "cond") {
    if (graphs.size() != 2 || values.empty()) refuse(node, "is not cond(pred, true, false, operands)");
    out.step = Step::cond;
    out.args.push_back(any_source(*values[0], label(node)));
    for (ValueSource& s : operands(1)) out.args.push_back(std::move(s));
  } else if (op == "while_loop") {
    if (graphs.size() != 2 || values.size() != 2 || values[0]->kind != Kind::tensors)
      refuse(node, "is not while_loop(cond, body, carried, additional)");
    out.step = Step::while_loop;
    out.carried = values[0]->names.size();
    out.args = operands(0);
  } else if (op == "wrap_with_set_grad_enabled") {
    if (graphs.size() != 1 || values.empty() || values[0]->kind != Kind::boolean)
      refuse(node, "is not wrap_with_set_grad_enabled(enable, body, *args)");
    out.step = Step::set_grad;
    out.flag = values[0]->ints.front() != 0;
    out.args = operands(1);
  } else if (op == "wrap_with_autocast") {
    // (device_type, dtype, enabled, cache_enabled, body, *args)
    if (graphs.size() != 1 || values.size() < 4 || values[2]->kind != Kind::boolean)
      refuse(node, "is not wrap_with_autocast(device_type, dtype, enabled, cache_enabled, body, "
                   "*args)");
    out.step = Step::autocast;
    out.autocast = autocast_settings(node, values);
    out.args = operands(4);
  } else {
    refuse(node, "the higher-order operator " + op + ", which this runner does not run (it runs "
                 "cond, while_loop, wrap_with_set_grad_enabled and wrap_with_autocast)");
  }
  out.graphs = graphs;
  bind_outputs(node, out, nullptr);
  return out;
}

// wrap_with_autocast(device_type, dtype, enabled, cache_enabled, ...)'s torch.autocast: the
// device type "cpu" is the run's device's, as the program's devices are (device_of); a dtype or
// cache_enabled of None is the current setting, as torch.autocast reads it.
AutocastSettings GraphPlanner::autocast_settings(
    const ProgramNode& node, const std::vector<const ProgramArgument*>& values) const {
  AutocastSettings settings;
  const ProgramArgument& device = *values[0];
  if (device.kind != Kind::string && device.kind != Kind::device)
    refuse(node, "gives autocast a device type that is no string");
  settings.device = device_of(device, label(node)).type();
  if (!autocast_available(settings.device))
    refuse(node, "runs its body under autocast on " + c10::DeviceTypeName(settings.device, true) +
                     ", which LibTorch " TORCH_VERSION " has no autocast for");
  settings.enabled = values[2]->ints.front() != 0;
  const ProgramArgument& dtype = *values[1];
  if (dtype.kind == Kind::scalar_type) {
    settings.dtype = scalar_type_of(*dtype.dtype);
    if (!settings.dtype)
      refuse(node, "gives autocast the dtype " + std::string(dtype.dtype->name) +
                       ", which LibTorch " TORCH_VERSION " has not");
  } else if (dtype.kind != Kind::none) {
    refuse(node, "gives autocast a dtype that is neither a dtype nor None");
  }
  const ProgramArgument& cache = *values[3];
  if (cache.kind == Kind::boolean)
    settings.cache_enabled = cache.ints.front() != 0;
  else if (cache.kind != Kind::none)
    refuse(node, "gives autocast a cache_enabled that is neither a bool nor None");
  return settings;
}

// Each node output to a slot. With the operator's schema: output i is return i (a list return
// unpacked into its elements' names); without one, each output as it is written.
void GraphPlanner::bind_outputs(const ProgramNode& node, Instruction& out,
                                const std::vector<c10::Argument>* returns) {
  const auto bind = [&](const ProgramArgument& a, bool list) {
    OutputBinding b;
    switch (a.kind) {
      case Kind::tensor:
        b.kind = OutputBinding::Kind::slot;
        b.slot = define(*a.names.front(), SlotKind::tensor, node.name);
        break;
      case Kind::sym_int:
      case Kind::sym_float:
      case Kind::sym_bool:
        if (a.names.front()) {
          b.kind = OutputBinding::Kind::slot;
          b.slot = define(*a.names.front(), SlotKind::number, node.name);
        }
        break;
      case Kind::tensors:
      case Kind::optional_tensors:
      case Kind::sym_ints:
        b.kind = OutputBinding::Kind::list;
        for (const auto& name : a.names)
          b.slots.push_back(name ? define(*name, a.kind == Kind::sym_ints ? SlotKind::number
                                                                         : SlotKind::tensor,
                                          node.name)
                                 : -1);
        break;
      case Kind::none:
        break;
      default:
        refuse(node, "has an output (" + a.variant + ") this runner cannot hold");
    }
    (void)list;
    out.outputs.push_back(std::move(b));
  };
  if (returns && returns->empty()) {
    for (const ProgramArgument& a : node.outputs)
      if (a.kind != Kind::none) refuse(node, "names an output its operator does not return");
    return;
  }
  if (returns && node.outputs.size() > returns->size())
    refuse(node, "names " + std::to_string(node.outputs.size()) + " outputs of an operator that " +
                     "returns " + std::to_string(returns->size()));
  for (const ProgramArgument& a : node.outputs) bind(a, false);
}

// After its last reader, a value is freed (as Python's frame would drop it), one nothing reads
// right after the node that made it, except the graph's outputs and its inputs (what a caller
// bound).
void GraphPlanner::release_dead_values() {
  std::set<std::int32_t> kept(out_.inputs.begin(), out_.inputs.end());
  for (const ValueSource& s : out_.outputs) {
    kept.insert(s.slot);
    kept.insert(s.slots.begin(), s.slots.end());
  }
  std::vector<std::optional<std::size_t>> last(kinds_.size());
  for (const auto& [slot, at] : reads_) last[static_cast<std::size_t>(slot)] = at;
  for (std::size_t slot = 0; slot < last.size(); ++slot) {
    const std::size_t at = last[slot].value_or(defined_at_[slot]);
    if (!kept.count(static_cast<std::int32_t>(slot)) && at < out_.instructions.size())
      out_.instructions[at].release.push_back(static_cast<std::int32_t>(slot));
  }
}

// Backwards from the graph's outputs: a node is live when a live node or the output reads what
// it makes, or when it has effects (a mutable schema, no results: the assertions)
void GraphPlanner::mark_dead_nodes() {
  std::set<std::int32_t> needed;
  for (const ValueSource& s : out_.outputs)
    for (const std::int32_t slot : slots_read(s)) needed.insert(slot);
  for (auto it = out_.instructions.rbegin(); it != out_.instructions.rend(); ++it) {
    Instruction& step = *it;
    bool live = step.step == Step::dispatch &&
                (step.op->schema().is_mutable() || step.op->schema().returns().empty());
    for (const OutputBinding& b : step.outputs) {
      if (b.kind == OutputBinding::Kind::slot && needed.count(b.slot)) live = true;
      for (const std::int32_t slot : b.slots)
        if (slot >= 0 && needed.count(slot)) live = true;
    }
    step.dead = !live;
    if (live)
      for (const ValueSource& s : step.args)
        for (const std::int32_t slot : slots_read(s)) needed.insert(slot);
  }
}

}  // namespace

std::vector<std::int32_t> slots_read(const ValueSource& source) {
  std::vector<std::int32_t> out;
  if (source.slot >= 0) out.push_back(source.slot);
  for (const std::int32_t slot : source.slots)
    if (slot >= 0) out.push_back(slot);
  return out;
}

ProgramPlan plan_program(const ExportProgram& program, const c10::Device& device) {
  ProgramPlan plan;
  for (std::size_t g = 0; g < program.graphs.size(); ++g)
    plan.graphs.push_back(GraphPlanner(program, device, g).plan());
  return plan;
}

}  // namespace vin::diagnostics::export_run
