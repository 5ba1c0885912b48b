#include "vin/diagnostics/export_run/program_runner.h"

#include <ATen/ScalarOps.h>
#include <c10/core/GradMode.h>

#include <map>
#include <set>
#include <tuple>

#include "vin/diagnostics/export_run/program_weights.h"
#include "vin/diagnostics/export_run/python_operators.h"
#include "vin/diagnostics/records/error.h"
#include "vin/diagnostics/text/printable.h"

namespace vin::diagnostics::export_run {
namespace {

using SpecKind = ProgramInputSpec::Kind;

c10::IValue value_of(const ValueSource& s, const std::vector<c10::IValue>& values) {
  using K = ValueSource::Kind;
  const auto at = [&](std::int32_t slot) -> const c10::IValue& {
    return values[static_cast<std::size_t>(slot)];
  };
  switch (s.kind) {
    case K::constant:
      return s.constant;
    case K::slot:
      return at(s.slot);
    case K::wrapped_slot:
      return at::native::wrapped_scalar_tensor(at(s.slot).toScalar());
    case K::tensor_list: {
      c10::List<at::Tensor> list;
      list.reserve(s.slots.size());
      for (const std::int32_t slot : s.slots) list.push_back(at(slot).toTensor());
      return list;
    }
    case K::optional_tensor_list: {
      c10::List<c10::optional<at::Tensor>> list;
      list.reserve(s.slots.size());
      for (const std::int32_t slot : s.slots)
        list.push_back(slot < 0 || at(slot).isNone() ? c10::optional<at::Tensor>()
                                                     : c10::optional<at::Tensor>(at(slot).toTensor()));
      return list;
    }
    case K::int_list: {
      c10::List<std::int64_t> list;
      list.reserve(s.slots.size());
      for (std::size_t i = 0; i < s.slots.size(); ++i)
        list.push_back(s.slots[i] < 0 ? s.ints[i] : at(s.slots[i]).toInt());
      return list;
    }
    case K::real_list: {
      c10::List<double> list;
      for (std::size_t i = 0; i < s.slots.size(); ++i)
        list.push_back(s.slots[i] < 0 ? s.reals[i] : at(s.slots[i]).toDouble());
      return list;
    }
    case K::bool_list: {
      c10::List<bool> list;
      for (std::size_t i = 0; i < s.slots.size(); ++i)
        list.push_back(s.slots[i] < 0 ? s.ints[i] != 0 : at(s.slots[i]).toBool());
      return list;
    }
  }
  return {};
}

void bind_output(const OutputBinding& b, const c10::IValue& v, std::vector<c10::IValue>& values) {
  switch (b.kind) {
    case OutputBinding::Kind::skip:
      return;
    case OutputBinding::Kind::slot:
      values[static_cast<std::size_t>(b.slot)] = v;
      return;
    case OutputBinding::Kind::list: {
      const auto elements = v.toListRef();
      if (elements.size() != b.slots.size())
        throw Error("returned " + std::to_string(elements.size()) + " values where the graph " +
                    "names " + std::to_string(b.slots.size()));
      for (std::size_t i = 0; i < elements.size(); ++i)
        if (b.slots[i] >= 0) values[static_cast<std::size_t>(b.slots[i])] = elements[i];
      return;
    }
  }
}

// results given one by one (a nested graph's outputs) bound to the node's outputs in order
void bind_flat(const std::vector<OutputBinding>& outputs, const std::vector<c10::IValue>& results,
               std::vector<c10::IValue>& values) {
  std::size_t next = 0;
  const auto take = [&]() -> const c10::IValue& {
    if (next >= results.size())
      throw Error("its graph returned " + std::to_string(results.size()) + " values, fewer " +
                  "than the node names");
    return results[next++];
  };
  for (const OutputBinding& b : outputs) {
    if (b.kind == OutputBinding::Kind::slot) {
      values[static_cast<std::size_t>(b.slot)] = take();
    } else if (b.kind == OutputBinding::Kind::list) {
      for (const std::int32_t slot : b.slots) {
        const c10::IValue& v = take();
        if (slot >= 0) values[static_cast<std::size_t>(slot)] = v;
      }
    } else {
      take();
    }
  }
}

bool truth(const c10::IValue& v) {
  if (v.isTensor()) return v.toTensor().is_nonzero();
  if (v.isBool()) return v.toBool();
  if (v.isInt()) return v.toInt() != 0;
  if (v.isDouble()) return v.toDouble() != 0;
  throw Error("a predicate that is neither a tensor nor a number");
}

// the first line of a LibTorch error, without its C++ backtrace
std::string first_line(const std::exception& e) {
  const c10::Error* c10_error = dynamic_cast<const c10::Error*>(&e);
  std::string text = c10_error ? c10_error->what_without_backtrace() : e.what();
  if (const auto end = text.find('\n'); end != std::string::npos) text.resize(end);
  return text;
}

}  // namespace

std::string named(const ProgramNode& node) {
  // a node without a name of its own (torch 2.1-2.4) is named by its place and target already
  if (node.name.find(node.target) != std::string::npos) return node.name;
  return node.name + " (" + printable(node.target, 200) + ")";
}

ProgramRunner::ProgramRunner(const ZipArchive& zip, ExportProgram program,
                             const c10::Device& device)
    : program_(std::move(program)), device_(device) {
  for (const ProgramInputSpec& spec : program_.inputs) {
    if (spec.kind == SpecKind::custom_obj || spec.kind == SpecKind::other)
      throw Error(program_.file + ": forward takes " + spec.variant + " " +
                  printable(spec.arg, 100) + ", which this runner cannot make");
    if (spec.kind != SpecKind::user_input && spec.kind != SpecKind::constant_input) continue;
    ProgramArgumentSlot a;
    a.name = spec.kind == SpecKind::constant_input ? spec.arg : spec.arg;
    if (spec.kind == SpecKind::user_input && !spec.value.names.empty() && spec.value.names.front())
      a.name = *spec.value.names.front();
    a.tensor = spec.value.kind == ProgramArgument::Kind::tensor;
    a.constant = spec.kind == SpecKind::constant_input;
    for (const ProgramInputMeta& m : program_.input_meta)
      if (m.name == a.name) a.meta = &m;
    arguments_.push_back(std::move(a));
  }
  weights_ = make_program_weights(zip, program_, device_);
  plan_ = plan_program(program_, device_);
  if (plan_.graphs.front().inputs.size() != program_.inputs.size())
    throw Error(program_.file + ": " + program_.entry + "'s graph has " +
                std::to_string(plan_.graphs.front().inputs.size()) + " inputs and its signature " +
                std::to_string(program_.inputs.size()));
}

void ProgramRunner::check_inputs(const std::vector<c10::IValue>& arguments) const {
  if (arguments.size() != arguments_.size())
    throw Error(program_.file + ": forward takes " + std::to_string(arguments_.size()) +
                " arguments, given " + std::to_string(arguments.size()));
  std::map<std::string, std::pair<std::int64_t, std::string>> symbols;  // value, where seen
  for (std::size_t i = 0; i < arguments.size(); ++i) {
    const ProgramArgumentSlot& a = arguments_[i];
    const std::string where = "the argument " + printable(a.name, 100);
    if (a.tensor && !arguments[i].isTensor())
      throw Error(where + " must be a tensor");
    if (!a.meta || !arguments[i].isTensor()) continue;
    const at::Tensor& t = arguments[i].toTensor();
    if (static_cast<std::size_t>(t.dim()) != a.meta->sizes.size())
      throw Error(where + " has " + std::to_string(t.dim()) +
                  " dimensions where the program was exported with " +
                  std::to_string(a.meta->sizes.size()));
    for (std::size_t d = 0; d < a.meta->sizes.size(); ++d) {
      const auto& size = a.meta->sizes[d];
      const std::int64_t got = t.size(static_cast<std::int64_t>(d));
      const std::string dim = where + "'s dimension " + std::to_string(d);
      if (size.value && *size.value != got)
        throw Error(dim + " is " + std::to_string(got) +
                    " where the program was exported for " + std::to_string(*size.value));
      if (size.value) continue;
      const auto [seen, fresh] = symbols.try_emplace(size.symbol, got, dim);
      if (!fresh && seen->second.first != got)
        throw Error(dim + " is " + std::to_string(got) + " where " +
                    seen->second.second + " is " + std::to_string(seen->second.first) +
                    ": both are " + size.symbol + " in the program");
      for (const ProgramRange& r : program_.ranges)
        if (r.symbol == size.symbol && ((r.min && got < *r.min) || (r.max && got > *r.max)))
          throw Error(dim + " is " + std::to_string(got) + ", outside " +
                      r.symbol + "'s range [" + (r.min ? std::to_string(*r.min) : "-inf") + ", " +
                      (r.max ? std::to_string(*r.max) : "inf") + "]");
    }
  }
}

std::vector<c10::IValue> ProgramRunner::run(const std::vector<c10::IValue>& arguments,
                                            ProgramObserver* observer) {
  check_inputs(arguments);
  // no autograd, as every forward of the tool runs (run_forwards' NoGradGuard): not
  // c10::InferenceMode, whose guard GCC 16 reports as maybe-uninitialized inside LibTorch
  // 2.14's headers (AutogradState's optional SafePyObject), which -Werror makes an error
  c10::AutoGradMode no_grad(false);
  std::vector<c10::IValue> inputs;
  std::size_t next = 0;
  for (const ProgramInputSpec& spec : program_.inputs) {
    switch (spec.kind) {
      case SpecKind::parameter:
      case SpecKind::buffer:
      case SpecKind::constant_tensor:
        inputs.push_back(weights_.at(spec.target));
        break;
      case SpecKind::user_input:
        inputs.push_back(arguments[next++]);
        break;
      case SpecKind::constant_input:
        ++next;  // the graph holds its value
        inputs.emplace_back();
        break;
      case SpecKind::token:
        inputs.push_back(at::empty({0}, at::TensorOptions().device(device_)));
        break;
      default:
        inputs.emplace_back();
    }
  }
  std::vector<c10::IValue> results = run_graph(0, inputs, observer);
  std::vector<c10::IValue> user;
  for (std::size_t i = 0; i < program_.outputs.size() && i < results.size(); ++i) {
    const ProgramOutputSpec& spec = program_.outputs[i];
    if (spec.kind == "buffer_mutation" && results[i].isTensor())
      weights_[spec.target] = results[i].toTensor();
    else if (spec.kind == "user_output")
      user.push_back(results[i]);
  }
  return user;
}

std::vector<at::Tensor> ProgramRunner::weights(const std::string& kind) const {
  std::vector<at::Tensor> out;
  TiedWeights met;
  for (const ProgramWeight& w : program_.weights) {
    const at::Tensor* t = w.kind == kind ? weight(w.name) : nullptr;
    if (t && met.first(*t)) out.push_back(*t);
  }
  return out;
}

const at::Tensor* ProgramRunner::weight(const std::string& name) const {
  const auto it = weights_.find(name);
  return it == weights_.end() ? nullptr : &it->second;
}

std::vector<c10::IValue> ProgramRunner::run_graph(std::size_t index,
                                                  const std::vector<c10::IValue>& inputs,
                                                  ProgramObserver* observer) {
  const GraphPlan& graph = plan_.graphs[index];
  if (inputs.size() != graph.inputs.size())
    throw Error(program_.file + ": a graph of " + std::to_string(graph.inputs.size()) +
                " inputs given " + std::to_string(inputs.size()));
  std::vector<c10::IValue> values(graph.slots);
  for (std::size_t i = 0; i < inputs.size(); ++i)
    if (graph.inputs[i] >= 0) values[static_cast<std::size_t>(graph.inputs[i])] = inputs[i];
  const ProgramGraph& nodes = program_.graphs[index];
  for (const Instruction& step : graph.instructions) {
    if (step.dead) {
      for (const std::int32_t slot : step.release) values[static_cast<std::size_t>(slot)] = {};
      continue;
    }
    check_deadline();
    if (observer) observer->before_node(step.node, values);
    try {
      execute(graph, step, values);
    } catch (const std::exception& e) {
      throw Error(named(nodes.nodes[step.node]) + " raised: " +
                  first_line(e));
    }
    if (observer) observer->after_node(step.node, values);
    for (const std::int32_t slot : step.release) values[static_cast<std::size_t>(slot)] = {};
  }
  std::vector<c10::IValue> out;
  out.reserve(graph.outputs.size());
  for (const ValueSource& s : graph.outputs) out.push_back(value_of(s, values));
  return out;
}

void ProgramRunner::execute(const GraphPlan&, const Instruction& step,
                            std::vector<c10::IValue>& values) {
  std::vector<c10::IValue> stack;
  stack.reserve(step.args.size());
  for (const ValueSource& s : step.args) stack.push_back(value_of(s, values));
  switch (step.step) {
    case Step::dispatch: {
      step.op->callBoxed(&stack);
      if (step.outputs.size() > 1 && stack.size() == 1 && stack[0].isList()) {
        bind_flat(step.outputs, stack[0].toListRef().vec(), values);
      } else {
        for (std::size_t i = 0; i < step.outputs.size() && i < stack.size(); ++i)
          bind_output(step.outputs[i], stack[i], values);
      }
      return;
    }
    case Step::python_operator:
      bind_output(step.outputs.at(0), apply_python_operator(step.name, stack), values);
      return;
    case Step::tensor_property:
      bind_output(step.outputs.at(0), read_tensor_property(step.name, stack), values);
      return;
    case Step::cond: {
      const bool which = truth(stack.front());
      const std::vector<c10::IValue> operands(stack.begin() + 1, stack.end());
      bind_flat(step.outputs, run_graph(step.graphs[which ? 0 : 1], operands, nullptr), values);
      return;
    }
    case Step::while_loop: {
      std::vector<c10::IValue> state = stack;
      for (;;) {
        check_deadline();
        if (!truth(run_graph(step.graphs[0], state, nullptr).at(0))) break;
        std::vector<c10::IValue> carried = run_graph(step.graphs[1], state, nullptr);
        if (carried.size() != step.carried)
          throw Error("its body returned " + std::to_string(carried.size()) + " values for " +
                      std::to_string(step.carried) + " carried ones");
        std::copy(carried.begin(), carried.end(), state.begin());
      }
      state.resize(step.carried);
      bind_flat(step.outputs, state, values);
      return;
    }
    case Step::set_grad: {
      c10::AutoGradMode grad(step.flag);
      bind_flat(step.outputs, run_graph(step.graphs[0], stack, nullptr), values);
      return;
    }
    case Step::autocast: {
      const AutocastScope autocast(step.autocast);
      bind_flat(step.outputs, run_graph(step.graphs[0], stack, nullptr), values);
      return;
    }
  }
}

void ProgramRunner::check_deadline() {
  if (!deadline_ || std::chrono::steady_clock::now() < *deadline_) return;
  timed_out_ = true;
  throw Error("the forward ran past its time limit");
}

}  // namespace vin::diagnostics::export_run
