// The .pt2 reader's graph: the modules the program names (module_call_graph, nn_module_stack),
// its graph and method signatures, its operator calls per module.
#include "vin/diagnostics/export/export_reader.h"

#include <algorithm>
#include <map>
#include <memory>

#include "vin/diagnostics/container/crc32.h"
#include "vin/diagnostics/export/export_module_stack.h"
#include "vin/diagnostics/json/bounded_json.h"
#include "vin/diagnostics/pickle/pickle_reader.h"
#include "vin/diagnostics/pickle/saved_tensor.h"
#include "vin/diagnostics/records/error.h"
#include "vin/diagnostics/records/module_counts.h"
#include "vin/diagnostics/text/printable.h"
#include "vin/diagnostics/text/type_names.h"
#include "vin/diagnostics/torch_save/torch_save_file.h"

namespace vin::diagnostics::export_detail {

// the module paths of module_call_graph, and those of the nodes' nn_module_stack (with the
// types of their modules), each in the order met; each node's innermost module, for the
// operators
std::pair<std::vector<std::string>, std::vector<std::string>> ExportReader::module_paths(
    const Json& graph_module, const Json& graph, const std::string& entry) {
  std::vector<std::string> called, stacked;
  if (const Json* calls = optional_field(graph_module, "module_call_graph");
      calls && calls->is_array())
    for (const Json& call : *calls)
      if (const Json* fqn = optional_field(call, "fqn"); fqn && fqn->is_string())
        called.push_back(fqn->get<std::string>());
  const Json* nodes = optional_field(graph, "nodes");
  if (!nodes || !nodes->is_array()) throw Malformed{entry + ": the graph has no nodes"};
  const SanitisedModules known(named_modules(graph_module, called));
  for (std::size_t i = 0; i < nodes->size(); ++i) {
    const Json& node = (*nodes)[i];
    const Json* metadata = optional_field(node, "metadata");
    const Json* stack = metadata ? optional_field(*metadata, "nn_module_stack") : nullptr;
    std::string innermost;  // the root, for a node without a stack
    if (stack && stack->is_string()) {
      std::vector<ModuleStackEntry> entries;
      try {
        entries = split_module_stack(stack->get<std::string>());
      } catch (const MalformedModuleStack& e) {
        throw Malformed{entry + ": " + node_name(node, i) + ": " + e.what()};
      }
      const auto paths = module_stack_paths(entries, known);
      for (std::size_t e = 0; e < entries.size(); ++e) {
        if (!paths[e]) continue;  // not a module path unambiguously: left out
        stacked.push_back(*paths[e]);
        types_.emplace(*paths[e], entries[e].type);
        innermost = *paths[e];
      }
    }
    node_modules_.push_back(std::move(innermost));
  }
  return {called, stacked};
}

// the modules the call graph and the signature's tensor names name: what a sanitised module
// key of an nn_module_stack may stand for (a damaged spec is refused where it is read)
std::set<std::string> ExportReader::named_modules(const Json& graph_module,
                                           const std::vector<std::string>& called) {
  std::set<std::string> known(called.begin(), called.end());
  const Json* signature = optional_field(graph_module, "signature");
  const Json* specs = signature ? optional_field(*signature, "input_specs") : nullptr;
  if (!specs || !specs->is_array()) return known;
  for (const Json& spec : *specs) {
    if (!spec.is_object()) continue;
    for (auto it = spec.begin(); it != spec.end(); ++it)
      for (const char* key : {"parameter_name", "buffer_name", "tensor_constant_name"})
        if (const Json* name = optional_field(*it, key); name && name->is_string())
          for (std::string p = parent_path(name->get<std::string>()); !p.empty();
               p = parent_path(p))
            known.insert(p);
  }
  return known;
}

// a node as a message names it: its name where the program records one (torch 2.5 on), else
// its place and target
std::string ExportReader::node_name(const Json& node, std::size_t index) {
  if (const Json* name = optional_field(node, "name"); name && name->is_string())
    return "the node " + printable(name->get<std::string>(), 100);
  std::string out = "node " + std::to_string(index);
  if (const Json* target = optional_field(node, "target"); target && target->is_string())
    out += " (" + printable(target->get<std::string>(), 100) + ")";
  return out;
}

std::vector<ExportReader::Spec> ExportReader::specs(const Json& graph_module, const char* key,
                               const std::string& entry) {
  const std::string where = entry + ": the graph signature";
  const Json& signature = *field(graph_module, "signature", entry + ": graph_module");
  std::vector<Spec> out;
  const Json* list = optional_field(signature, key);
  if (!list || !list->is_array()) throw Malformed{where + " has no " + key};
  for (const Json& spec : *list) {
    const auto [kind, v] = union_variant(spec, where + "'s " + key);
    Spec s;
    GraphSignatureEntry& e = s.entry;
    // the schema's tensor_constant is Python's InputKind.CONSTANT_TENSOR (contract 10.3)
    e.kind = kind == "tensor_constant" ? "constant_tensor" : kind;
    if (const Json* arg = optional_field(*v, "arg")) {
      s.arg = arg;
      e.name = argument_name(*arg);
    }
    if (const Json* name = optional_field(*v, "name"); name && name->is_string())
      e.name = name->get<std::string>();  // constant_input
    if (kind == "constant_input") s.value = optional_field(*v, "value");
    for (const char* target : {"parameter_name", "buffer_name", "tensor_constant_name",
                               "custom_obj_name", "user_input_name"})
      if (const Json* t = optional_field(*v, target); t && t->is_string())
        e.target = t->get<std::string>();
    out.push_back(std::move(s));
  }
  return out;
}

// the graph signature's inputs and outputs as written (their kinds, names and targets)
GraphSignature ExportReader::graph_signature(const Json& graph_module, const std::string& entry) {
  GraphSignature out;
  for (Spec& s : specs(graph_module, "input_specs", entry)) out.inputs.push_back(s.entry);
  for (Spec& s : specs(graph_module, "output_specs", entry)) out.outputs.push_back(s.entry);
  return out;
}

// forward as the program takes it: one argument per user input, in order (a tensor's
// dtype and shape from the graph's TensorMeta), the user outputs, and range_constraints'
// symbols with their ranges
MethodSignature ExportReader::forward_signature(const Json& program, const Json& graph_module,
                                         const Json& graph, const std::string& entry) {
  MethodSignature method;
  method.name = "forward";
  for (const Spec& s : specs(graph_module, "input_specs", entry)) {
    // a user input: a tensor, a symbolic size, or a constant written as its value alone
    // (as_float: 2.0, no name), as torch's serializer did before constant_input; torch 2.6
    // and 2.14 write a constant (a float, int, bool, str or None argument, which export
    // specialises) as a constant_input of its own, named: an argument all the same
    const Json* arg = s.entry.kind == "user_input"       ? s.arg
                      : s.entry.kind == "constant_input" ? s.value
                                                         : nullptr;
    if (!arg) continue;
    ReturnSignature value = user_value(*arg, graph, entry);
    if (s.entry.kind == "constant_input") value.name = s.entry.name;
    ArgumentSignature a;
    a.name = value.name.value_or("");
    a.type = std::move(value.type);
    a.default_value = nullptr;
    a.tensor = std::move(value.tensor);
    method.arguments.push_back(std::move(a));
  }
  std::vector<ReturnSignature> outputs;
  for (const Spec& s : specs(graph_module, "output_specs", entry))
    if (s.entry.kind == "user_output" && s.arg)
      outputs.push_back(user_value(*s.arg, graph, entry));
  if (outputs.size() == 1) {
    method.returns = outputs.front().type;
  } else {
    method.returns = outputs.empty() ? "None" : "Tuple[";
    for (std::size_t i = 0; i < outputs.size(); ++i)
      method.returns += (i ? ", " : "") + outputs[i].type + (i + 1 == outputs.size() ? "]" : "");
  }
  method.outputs = std::move(outputs);
  method.dimensions.emplace();
  if (const Json* ranges = optional_field(program, "range_constraints");
      ranges && ranges->is_object())
    for (auto it = ranges->begin(); it != ranges->end(); ++it) {
      const auto bound = [&](const char* key) -> std::optional<std::int64_t> {
        const Json* b = optional_field(*it, key);  // null (or 2.1's Infinity): unbounded
        if (b && b->is_number_integer()) return b->get<std::int64_t>();
        return std::nullopt;
      };
      method.dimensions->push_back({it.key(), bound("min_val"), bound("max_val")});
    }
  return method;
}

// a user input or output: {as_tensor: {name}} and the other Argument variants
ReturnSignature ExportReader::user_value(const Json& arg, const Json& graph, const std::string& entry) {
  ReturnSignature out;
  out.name = argument_name(arg);
  const std::string where = entry + ": a user input or output";
  const auto [variant, v] = arg.is_object() && arg.contains("name") && arg.size() == 1
                                ? std::pair<std::string, const Json*>{"as_tensor", &arg}
                                : union_variant(arg, where);
  out.type = argument_type(variant, *v);
  if (variant != "as_tensor" || !out.name) return out;
  const Json* meta = graph_tensor_meta(graph, *out.name, entry);
  const std::string meta_where = entry + ": the tensor " + *out.name;
  TensorSpec tensor;
  tensor.dtype = schema_dtype(*field(*meta, "dtype", meta_where), meta_where)->python_name();
  const Json& sizes = *field(*meta, "sizes", meta_where);
  if (!sizes.is_array()) throw Malformed{meta_where + "'s sizes are not a list"};
  tensor.shape = Json::array();
  for (const Json& size : sizes) tensor.shape.push_back(dimension_json(size, meta_where));
  out.tensor = std::move(tensor);
  return out;
}

// An Argument's (or a ConstantValue's) type as a PyTorch user writes it, as a TorchScript
// signature spells it: every variant the schema (torch 2.1-2.14) has, a custom object by its
// class; a variant of a newer schema by its name
std::string ExportReader::argument_type(const std::string& variant, const Json& value) {
  static const std::map<std::string, std::string, std::less<>> kTypes = {
      {"as_tensor", "Tensor"},
      {"as_sym_int", "SymInt"},
      {"as_sym_float", "SymFloat"},
      {"as_sym_bool", "SymBool"},
      {"as_int", "int"},
      {"as_float", "float"},
      {"as_bool", "bool"},
      {"as_string", "str"},
      {"as_none", "None"},
      {"as_complex", "complex"},
      {"as_scalar_type", "torch.dtype"},
      {"as_memory_format", "torch.memory_format"},
      {"as_layout", "torch.layout"},
      {"as_device", "torch.device"},
      {"as_optional_tensor", "Optional[Tensor]"},
      {"as_tensors", "List[Tensor]"},
      {"as_optional_tensors", "List[Optional[Tensor]]"},
      {"as_nested_tensors", "List[List[Tensor]]"},
      {"as_ints", "List[int]"},
      {"as_int_lists", "List[List[int]]"},
      {"as_floats", "List[float]"},
      {"as_bools", "List[bool]"},
      {"as_strings", "List[str]"},
      {"as_sym_ints", "List[SymInt]"},
      {"as_sym_floats", "List[SymFloat]"},
      {"as_sym_bools", "List[SymBool]"},
      {"as_string_to_argument", "Dict[str, Any]"},
      {"as_graph", "Graph"},
      {"as_operator", "OpOverload"},
      {"as_custom_obj", "object"}};
  if (variant == "as_custom_obj")
    if (const Json* fqn = optional_field(value, "class_fqn"); fqn && fqn->is_string())
      return python_type_name(fqn->get<std::string>());
  const auto type = kTypes.find(variant);
  return type == kTypes.end() ? variant : type->second;
}

// the graph's name for an argument: {name} (TensorArgument), {as_tensor: {name}},
// {as_sym_int: {as_name}}, ...; none for a constant
std::optional<std::string> ExportReader::argument_name(const Json& arg) {
  if (arg.is_string()) return arg.get<std::string>();
  if (const Json* name = optional_field(arg, "name"); name && name->is_string())
    return name->get<std::string>();
  if (!arg.is_object() || arg.empty()) return std::nullopt;
  std::pair<std::string, const Json*> variant;
  try {
    variant = union_variant(arg, "an argument");
  } catch (const Malformed&) {
    return std::nullopt;
  }
  const Json& value = *variant.second;
  for (const char* key : {"name", "as_name"})
    if (const Json* name = optional_field(value, key); name && name->is_string())
      return name->get<std::string>();
  return std::nullopt;
}

// each node's target counted under the innermost module of its nn_module_stack (the root
// without one), the modules in named_modules() order, each module's operators in the order
// first called; nodes of control-flow subgraphs are their higher-order operator's
std::vector<OperatorCount> ExportReader::operator_counts(const Json& graph, const std::string& entry) const {
  std::map<std::string, std::vector<OperatorCount>> by_module;
  const Json* nodes = optional_field(graph, "nodes");
  if (!nodes || !nodes->is_array()) throw Malformed{entry + ": the graph has no nodes"};
  for (std::size_t i = 0; i < nodes->size(); ++i) {
    const Json* target = optional_field((*nodes)[i], "target");
    if (!target || !target->is_string()) throw Malformed{entry + ": a node without a target"};
    std::string op = target->get<std::string>();
    if (op.rfind("torch.ops.", 0) == 0) op = op.substr(10);
    const std::string& module = node_modules_.at(i);
    auto& counts = by_module[module];
    const auto it = std::find_if(counts.begin(), counts.end(),
                                 [&](const OperatorCount& c) { return c.op == op; });
    if (it != counts.end()) {
      ++it->calls;
    } else {
      counts.push_back({module.empty() ? kRootPath : module, op, 1});
    }
  }
  std::vector<OperatorCount> out;
  const std::function<void(const std::string&)> visit = [&](const std::string& path) {
    if (const auto it = by_module.find(path); it != by_module.end())
      out.insert(out.end(), it->second.begin(), it->second.end());
    if (const auto kids = children_.find(path); kids != children_.end())
      for (const std::string& child : kids->second) visit(child);
  };
  visit("");
  return out;
}

}  // namespace vin::diagnostics::export_detail
