#include "vin/diagnostics/run/program_forward.h"

#include <optional>

#include "vin/diagnostics/records/error.h"

namespace vin::diagnostics {
namespace {

using export_run::TreeSpec;

// a constant input's value as forward would take it
c10::IValue constant_value(const ProgramArgument& a) {
  using K = ProgramArgument::Kind;
  switch (a.kind) {
    case K::integer:
      return a.ints.front();
    case K::real:
      return a.reals.front();
    case K::boolean:
      return a.ints.front() != 0;
    case K::string:
      return a.strings.front();
    default:
      return {};
  }
}

c10::TypePtr type_of(const c10::IValue& value) {
  if (value.isInt()) return c10::IntType::get();
  if (value.isDouble()) return c10::FloatType::get();
  if (value.isBool()) return c10::BoolType::get();
  if (value.isString()) return c10::StringType::get();
  return c10::OptionalType::create(c10::TensorType::get());
}

}  // namespace

ProgramForward::ProgramForward(const export_run::ProgramRunner& runner) : runner_(runner) {
  const ExportProgram& program = runner.program();
  const ProgramCallSignature* root = nullptr;
  for (const ProgramCallSignature& c : program.calls)
    if (c.fqn.empty()) root = &c;
  const std::string where = program.file + ": the root's signature (module_call_graph)";
  if (root && !root->in_spec.empty()) in_spec_ = export_run::read_tree_spec(root->in_spec, where);
  if (root && !root->out_spec.empty())
    out_spec_ = export_run::read_tree_spec(root->out_spec, where);
  // each argument's constant value, where the export specialised it
  std::vector<c10::IValue> constants;
  for (const ProgramInputSpec& spec : program.inputs)
    if (spec.kind == ProgramInputSpec::Kind::user_input)
      constants.emplace_back();
    else if (spec.kind == ProgramInputSpec::Kind::constant_input)
      constants.push_back(constant_value(spec.value));
  const auto& arguments = runner.arguments();
  const auto leaf_argument = [&](std::size_t leaf, std::string name, bool keyword) {
    const export_run::ProgramArgumentSlot& a = arguments.at(leaf);
    if (a.constant) {
      const c10::IValue value = constants.at(leaf);
      return c10::Argument(std::move(name), type_of(value), c10::nullopt, value, keyword);
    }
    return c10::Argument(std::move(name),
                         a.tensor ? c10::TypePtr(c10::TensorType::get())
                                  : c10::TypePtr(c10::IntType::get()),
                         c10::nullopt, c10::nullopt, keyword);
  };
  ForwardSchema::Method forward{"forward", {}};
  const bool structured = in_spec_ && in_spec_->kind == TreeSpec::Kind::tuple &&
                          in_spec_->children.size() == 2 &&
                          in_spec_->children[1].kind == TreeSpec::Kind::dict &&
                          in_spec_->leaves() == arguments.size();
  if (structured) {
    std::size_t leaf = 0;
    const TreeSpec& args = in_spec_->children[0];
    for (std::size_t i = 0; i < args.children.size(); ++i) {
      std::string name = root && i < root->forward_arg_names.size()
                             ? root->forward_arg_names[i]
                             : (args.children[i].kind == TreeSpec::Kind::leaf
                                    ? arguments[leaf].name
                                    : "arg" + std::to_string(i));
      if (args.children[i].kind == TreeSpec::Kind::leaf)
        forward.parameters.push_back(leaf_argument(leaf, std::move(name), false));
      else
        forward.parameters.emplace_back(std::move(name), c10::AnyType::get());
      leaf += args.children[i].leaves();
    }
    const TreeSpec& kwargs = in_spec_->children[1];
    for (std::size_t k = 0; k < kwargs.keys.size(); ++k) {
      const std::string name =
          kwargs.keys[k].isString() ? kwargs.keys[k].toStringRef() : "kwarg" + std::to_string(k);
      if (kwargs.children[k].kind == TreeSpec::Kind::leaf)
        forward.parameters.push_back(leaf_argument(leaf, name, true));
      else
        forward.parameters.emplace_back(name, c10::AnyType::get(), c10::nullopt, c10::nullopt,
                                        true);
      leaf += kwargs.children[k].leaves();
    }
  } else {
    in_spec_.reset();  // the arguments one by one, in order
    for (std::size_t i = 0; i < arguments.size(); ++i)
      forward.parameters.push_back(leaf_argument(i, arguments[i].name, false));
  }
  schema_.description = "forward(";
  for (std::size_t i = 0; i < forward.parameters.size(); ++i) {
    const c10::Argument& p = forward.parameters[i];
    schema_.description += (i ? ", " : "") + p.name() + ": " + p.type()->annotation_str();
  }
  schema_.description += ")";
  schema_.methods.push_back(std::move(forward));
}

std::vector<c10::IValue> ProgramForward::arguments(const ForwardInputs& inputs) const {
  std::vector<c10::IValue> leaves;
  if (!in_spec_) {
    leaves = inputs.args;
    for (const auto& [name, value] : inputs.kwargs) leaves.push_back(value);
  } else {
    const auto& parameters = schema_.methods.front().parameters;
    const std::size_t positional = in_spec_->children[0].children.size();
    // a positional parameter given by name (an .npz's member, a --shape spec) goes to its place
    std::vector<std::optional<c10::IValue>> placed(positional);
    for (std::size_t i = 0; i < inputs.args.size() && i < positional; ++i) placed[i] = inputs.args[i];
    c10::impl::GenericDict kwargs(c10::StringType::get(), c10::AnyType::get());
    for (const auto& [name, value] : inputs.kwargs) {
      std::size_t at = 0;
      while (at < positional && parameters[at].name() != name) ++at;
      if (at < positional)
        placed[at] = value;
      else
        kwargs.insert(name, value);
    }
    // a keyword argument left out takes its default: the exported constant
    const TreeSpec& keys = in_spec_->children[1];
    for (const c10::IValue& key : keys.keys)
      if (key.isString() && !kwargs.contains(key))
        for (const c10::Argument& p : parameters)
          if (p.name() == key.toStringRef() && p.default_value()) kwargs.insert(key, *p.default_value());
    // positional ones left out likewise
    std::vector<c10::IValue> args;
    for (std::size_t i = 0; i < positional; ++i)
      args.push_back(placed[i] ? *placed[i]
                               : parameters[i].default_value().value_or(c10::IValue()));
    flatten(c10::ivalue::Tuple::create({c10::ivalue::Tuple::create(std::move(args)), kwargs}),
            *in_spec_, leaves, runner_.program().file + ": forward's arguments");
  }
  return leaves;
}

c10::IValue ProgramForward::output(const std::vector<c10::IValue>& outputs) const {
  if (out_spec_) {
    std::size_t next = 0;
    return export_run::unflatten(*out_spec_, outputs, next);
  }
  if (outputs.size() == 1) return outputs.front();
  return c10::ivalue::Tuple::create(outputs);
}

}  // namespace vin::diagnostics
