// The .pt2 reader's program for a runner: the graph with its arguments read from the schema's
// unions, nested graphs, signatures, module frames, ranges and where the weights lie.
#include "vin/diagnostics/export/export_program.h"

#include <algorithm>
#include <functional>
#include <limits>
#include <map>
#include <memory>

#include "vin/diagnostics/export/export_module_stack.h"
#include "vin/diagnostics/export/export_reader.h"
#include "vin/diagnostics/export/export_schema.h"
#include "vin/diagnostics/records/error.h"
#include "vin/diagnostics/text/printable.h"
#include "vin/diagnostics/torch_save/torch_save_file.h"

namespace vin::diagnostics {
namespace export_detail {
namespace {

using Kind = ProgramArgument::Kind;

std::int64_t integer(const Json& value, const std::string& where) {
  if (!value.is_number_integer()) throw Malformed{where + " is not an integer"};
  return value.get<std::int64_t>();
}

// a float as the schema writes it: a number, or inf and nan as the strings
// with_quoted_non_finite makes of them
double real(const Json& value, const std::string& where) {
  if (value.is_number()) return value.get<double>();
  if (value.is_string()) {
    const std::string text = value.get<std::string>();
    if (text == "Infinity") return std::numeric_limits<double>::infinity();
    if (text == "-Infinity") return -std::numeric_limits<double>::infinity();
    if (text == "NaN") return std::numeric_limits<double>::quiet_NaN();
  }
  throw Malformed{where + " is not a number"};
}

bool boolean(const Json& value, const std::string& where) {
  if (!value.is_boolean()) throw Malformed{where + " is not a boolean"};
  return value.get<bool>();
}

std::string text(const Json& value, const std::string& where) {
  if (!value.is_string()) throw Malformed{where + " is not a string"};
  return value.get<std::string>();
}

// A pointer, not a reference: GCC 14's -Wdangling-reference (export_schema.h's field())
const Json* list(const Json& value, const std::string& where) {
  if (!value.is_array()) throw Malformed{where + " is not a list"};
  return &value;
}

// {name: ...} (TensorArgument)
std::string tensor_name(const Json& value, const std::string& where) {
  if (value.is_string()) return value.get<std::string>();  // 2.1's bare names
  return string_field(value, "name", where);
}

// The graphs of one program as they are read: nested ones appended, their depth and the
// nodes counted against the bounds.
class GraphReader {
 public:
  GraphReader(ExportProgram& program, const SanitisedModules& known)
      : program_(program), known_(known) {}

  std::size_t graph(const Json& graph, std::size_t depth, const std::string& where) {
    if (depth > kMaxGraphNesting)
      throw Malformed{where + " nests graphs more than " + std::to_string(kMaxGraphNesting) +
                      " deep"};
    ProgramGraph out;
    out.depth = depth;
    const Json* inputs = optional_field(graph, "inputs");
    if (inputs)
      for (const Json& input : *list(*inputs, where + "'s inputs"))
        out.inputs.push_back(argument(input, depth, where + ": a graph input"));
    const Json* outputs = optional_field(graph, "outputs");
    if (outputs)
      for (const Json& output : *list(*outputs, where + "'s outputs"))
        out.outputs.push_back(argument(output, depth, where + ": a graph output"));
    const Json* nodes = optional_field(graph, "nodes");
    if (!nodes || !nodes->is_array()) throw Malformed{where + ": the graph has no nodes"};
    for (std::size_t i = 0; i < nodes->size(); ++i) {
      if (++node_count_ > kMaxProgramNodes)
        throw Malformed{where + " holds more than " + std::to_string(kMaxProgramNodes) +
                        " nodes"};
      out.nodes.push_back(node((*nodes)[i], i, depth, where));
    }
    program_.graphs.push_back(std::move(out));
    return program_.graphs.size() - 1;
  }

  ProgramArgument argument(const Json& value, std::size_t depth, const std::string& where) {
    ProgramArgument a;
    // a bare TensorArgument ({name}) where an Argument is expected (graph inputs of 2.1)
    if (value.is_object() && value.size() == 1 && value.contains("name")) {
      a.kind = Kind::tensor;
      a.variant = "as_tensor";
      a.names.push_back(tensor_name(value, where));
      return a;
    }
    const auto [variant, v] = union_variant(value, where);
    a.variant = variant;
    const std::string at = where + " (" + variant + ")";
    const auto sym = [&](const Json& item, Kind, const char* constant) {
      const auto [k, x] = union_variant(item, at);
      if (k == "as_name") {
        a.names.push_back(text(*x, at));
        a.ints.push_back(0);
        a.reals.push_back(0);
      } else if (k == constant) {
        a.names.push_back(std::nullopt);
        if (k == std::string("as_float")) {
          a.reals.push_back(real(*x, at));
          a.ints.push_back(0);
        } else {
          a.ints.push_back(k == std::string("as_bool") ? boolean(*x, at) : integer(*x, at));
          a.reals.push_back(0);
        }
      } else {
        throw Malformed{at + " is neither a name nor a constant"};
      }
    };
    const auto optional_tensor = [&](const Json& item) {
      const auto [k, x] = union_variant(item, at);
      if (k == "as_none")
        a.names.push_back(std::nullopt);
      else if (k == "as_tensor")
        a.names.push_back(tensor_name(*x, at));
      else
        throw Malformed{at + " is neither a tensor nor None"};
    };
    if (variant == "as_none") {
      a.kind = Kind::none;
    } else if (variant == "as_tensor") {
      a.kind = Kind::tensor;
      a.names.push_back(tensor_name(*v, at));
    } else if (variant == "as_tensors") {
      a.kind = Kind::tensors;
      for (const Json& t : *list(*v, at)) a.names.push_back(tensor_name(t, at));
    } else if (variant == "as_optional_tensor") {
      a.kind = Kind::optional_tensor;
      optional_tensor(*v);
    } else if (variant == "as_optional_tensors") {
      a.kind = Kind::optional_tensors;
      for (const Json& t : *list(*v, at)) optional_tensor(t);
    } else if (variant == "as_int") {
      a.kind = Kind::integer;
      a.ints.push_back(integer(*v, at));
    } else if (variant == "as_ints") {
      a.kind = Kind::integers;
      for (const Json& n : *list(*v, at)) a.ints.push_back(integer(n, at));
    } else if (variant == "as_float") {
      a.kind = Kind::real;
      a.reals.push_back(real(*v, at));
    } else if (variant == "as_floats") {
      a.kind = Kind::reals;
      for (const Json& n : *list(*v, at)) a.reals.push_back(real(n, at));
    } else if (variant == "as_bool") {
      a.kind = Kind::boolean;
      a.ints.push_back(boolean(*v, at));
    } else if (variant == "as_bools") {
      a.kind = Kind::booleans;
      for (const Json& n : *list(*v, at)) a.ints.push_back(boolean(n, at));
    } else if (variant == "as_string") {
      a.kind = Kind::string;
      a.strings.push_back(text(*v, at));
    } else if (variant == "as_strings") {
      a.kind = Kind::strings;
      for (const Json& n : *list(*v, at)) a.strings.push_back(text(n, at));
    } else if (variant == "as_sym_int" || variant == "as_sym_ints") {
      a.kind = variant == "as_sym_int" ? Kind::sym_int : Kind::sym_ints;
      if (a.kind == Kind::sym_int)
        sym(*v, a.kind, "as_int");
      else
        for (const Json& n : *list(*v, at)) sym(n, a.kind, "as_int");
    } else if (variant == "as_sym_float" || variant == "as_sym_floats") {
      a.kind = variant == "as_sym_float" ? Kind::sym_float : Kind::sym_floats;
      if (a.kind == Kind::sym_float)
        sym(*v, a.kind, "as_float");
      else
        for (const Json& n : *list(*v, at)) sym(n, a.kind, "as_float");
    } else if (variant == "as_sym_bool" || variant == "as_sym_bools") {
      a.kind = variant == "as_sym_bool" ? Kind::sym_bool : Kind::sym_bools;
      if (a.kind == Kind::sym_bool)
        sym(*v, a.kind, "as_bool");
      else
        for (const Json& n : *list(*v, at)) sym(n, a.kind, "as_bool");
    } else if (variant == "as_scalar_type") {
      a.kind = Kind::scalar_type;
      a.dtype = schema_dtype(*v, at);
    } else if (variant == "as_memory_format" || variant == "as_layout") {
      a.kind = variant == "as_layout" ? Kind::layout : Kind::memory_format;
      a.ints.push_back(integer(*v, at));
    } else if (variant == "as_device") {
      a.kind = Kind::device;
      a.strings.push_back(string_field(*v, "type", at));
      if (const Json* index = optional_field(*v, "index")) a.ints.push_back(integer(*index, at));
    } else if (variant == "as_graph") {
      a.kind = Kind::graph;
      const std::string name = optional_field(*v, "name") && (*v)["name"].is_string()
                                   ? (*v)["name"].get<std::string>()
                                   : std::string("a graph");
      a.graph = graph(*field(*v, "graph", at), depth + 1, at + " " + printable(name, 100));
    } else if (variant == "as_complex") {
      a.kind = Kind::complex;
      a.reals.push_back(real(*field(*v, "real", at), at));
      a.reals.push_back(real(*field(*v, "imag", at), at));
    } else {
      a.kind = Kind::other;
    }
    return a;
  }

 private:
  ProgramNode node(const Json& json, std::size_t index, std::size_t depth,
                   const std::string& where) {
    ProgramNode out;
    out.name = where + ": " + ExportReader::node_name(json, index);
    out.target = string_field(json, "target", out.name);
    if (const Json* inputs = optional_field(json, "inputs"))
      for (const Json& input : *list(*inputs, out.name + "'s inputs")) {
        ProgramNode::Input in;
        if (const Json* name = optional_field(input, "name"); name && name->is_string())
          in.name = name->get<std::string>();
        in.arg = argument(*field(input, "arg", out.name + "'s input"), depth,
                          out.name + "'s input " + printable(in.name, 100));
        // ArgumentKind: 1 positional, 2 keyword (0 or absent: unknown, as positional)
        if (const Json* kind = optional_field(input, "kind"); kind && kind->is_number_integer())
          in.keyword = kind->get<std::int64_t>() == 2;
        out.inputs.push_back(std::move(in));
      }
    if (const Json* outputs = optional_field(json, "outputs"))
      for (const Json& output : *list(*outputs, out.name + "'s outputs"))
        out.outputs.push_back(argument(output, depth, out.name + "'s output"));
    const Json* metadata = optional_field(json, "metadata");
    const Json* stack = metadata ? optional_field(*metadata, "nn_module_stack") : nullptr;
    if (stack && stack->is_string()) {
      std::vector<ModuleStackEntry> entries;
      try {
        entries = split_module_stack(stack->get<std::string>());
      } catch (const MalformedModuleStack& e) {
        throw Malformed{out.name + ": " + e.what()};
      }
      // only the empty-stack marker: a node without a stack, in the call it sits in
      out.has_stack = std::any_of(entries.begin(), entries.end(), [](const ModuleStackEntry& e) {
        return e.key != kEmptyModuleStackMarker;
      });
      const auto paths = module_stack_paths(entries, known_);
      for (std::size_t e = 0; e < entries.size(); ++e) {
        if (!paths[e]) continue;
        ProgramFrame frame;
        frame.path = *paths[e];
        frame.type = entries[e].type;
        frame.key = entries[e].key;
        // `key@N`: the module's N-th call (unflatten's `v@1`)
        if (const auto at = frame.key.rfind('@'); at != std::string::npos && at + 1 < frame.key.size()) {
          std::int64_t n = 0;
          bool digits = true;
          for (std::size_t c = at + 1; c < frame.key.size() && digits; ++c) {
            digits = frame.key[c] >= '0' && frame.key[c] <= '9' && n < (std::int64_t{1} << 40);
            n = n * 10 + (frame.key[c] - '0');
          }
          if (digits) frame.call_index = n;
        }
        out.frames.push_back(std::move(frame));
      }
    }
    return out;
  }

  ExportProgram& program_;
  const SanitisedModules& known_;
  std::size_t node_count_ = 0;
};

ProgramInputSpec::Kind input_kind(const std::string& variant) {
  using K = ProgramInputSpec::Kind;
  static const std::map<std::string, K, std::less<>> kKinds = {
      {"user_input", K::user_input},         {"parameter", K::parameter},
      {"buffer", K::buffer},                 {"tensor_constant", K::constant_tensor},
      {"constant_tensor", K::constant_tensor}, {"constant_input", K::constant_input},
      {"custom_obj", K::custom_obj},         {"token", K::token}};
  const auto it = kKinds.find(variant);
  return it == kKinds.end() ? K::other : it->second;
}

}  // namespace

ExportProgram ExportReader::program(const std::string& wanted) {
  ExportProgram out;
  out.file = zip_.path();
  const OpenedProgram opened = open_program(chosen_model(model_names(), wanted));
  const std::string& entry = opened.entry;
  const Json& program = opened.json;
  const Json& graph_module = opened.graph_module();
  const Json& graph = opened.graph();
  const std::vector<std::string>& called = opened.called;
  out.entry = entry;
  if (opened.torch_version) out.torch_version = *opened.torch_version;
  // the modules in named_modules() order, as inspect-model lists them (read())
  const std::function<void(const std::string&)> visit = [&](const std::string& path) {
    out.module_paths.push_back(path);
    if (const auto kids = children_.find(path); kids != children_.end())
      for (const std::string& child : kids->second) visit(child);
  };
  visit("");
  out.module_types = types_;

  const SanitisedModules known(named_modules(graph_module, called));
  GraphReader reader(out, known);
  // the program's graph first: graph() appends the nested ones as it meets them, so the
  // program's own is read into place 0 after them and moved to the front
  reader.graph(graph, 0, entry);
  std::rotate(out.graphs.begin(), out.graphs.end() - 1, out.graphs.end());
  // nested graph indices were given before the rotation: each moves up by one
  for (ProgramGraph& g : out.graphs)
    for (ProgramNode& n : g.nodes)
      for (ProgramNode::Input& in : n.inputs)
        if (in.arg.kind == ProgramArgument::Kind::graph) ++in.arg.graph;

  for (const Spec& s : specs(graph_module, "input_specs", entry)) {
    ProgramInputSpec spec;
    spec.variant = s.entry.kind;
    spec.kind = input_kind(s.entry.kind);
    spec.arg = s.entry.name.value_or("");
    spec.target = s.entry.target.value_or("");
    const Json* value = spec.kind == ProgramInputSpec::Kind::constant_input ? s.value : s.arg;
    if (value && (spec.kind == ProgramInputSpec::Kind::user_input ||
                  spec.kind == ProgramInputSpec::Kind::constant_input))
      spec.value = reader.argument(*value, 0, entry + ": the input " + printable(spec.arg, 100));
    out.inputs.push_back(std::move(spec));
  }
  for (const Spec& s : specs(graph_module, "output_specs", entry)) {
    ProgramOutputSpec spec;
    spec.kind = s.entry.kind;
    spec.target = s.entry.target.value_or("");
    if (s.arg) spec.value = reader.argument(*s.arg, 0, entry + ": an output");
    out.outputs.push_back(std::move(spec));
  }
  if (const Json* calls = optional_field(graph_module, "module_call_graph");
      calls && calls->is_array())
    for (const Json& call : *calls) {
      ProgramCallSignature c;
      if (const Json* fqn = optional_field(call, "fqn"); fqn && fqn->is_string())
        c.fqn = fqn->get<std::string>();
      const std::string where = entry + ": module_call_graph's " + printable(c.fqn, 100);
      if (const Json* signature = optional_field(call, "signature")) {
        c.has_signature = true;
        for (const char* key : {"inputs", "outputs"})
          if (const Json* values = optional_field(*signature, key))
            for (const Json& v : *list(*values, where + "'s " + key))
              (key[0] == 'i' ? c.inputs : c.outputs)
                  .push_back(reader.argument(v, 0, where + "'s " + key));
        if (const Json* spec = optional_field(*signature, "in_spec"); spec && spec->is_string())
          c.in_spec = spec->get<std::string>();
        if (const Json* spec = optional_field(*signature, "out_spec"); spec && spec->is_string())
          c.out_spec = spec->get<std::string>();
        if (const Json* names = optional_field(*signature, "forward_arg_names");
            names && names->is_array())
          for (const Json& n : *names)
            if (n.is_string()) c.forward_arg_names.push_back(n.get<std::string>());
      }
      out.calls.push_back(std::move(c));
    }
  if (const Json* ranges = optional_field(program, "range_constraints");
      ranges && ranges->is_object())
    for (auto it = ranges->begin(); it != ranges->end(); ++it) {
      const auto bound = [&](const char* key) -> std::optional<std::int64_t> {
        const Json* b = optional_field(*it, key);
        if (b && b->is_number_integer()) return b->get<std::int64_t>();
        return std::nullopt;
      };
      out.ranges.push_back({it.key(), bound("min_val"), bound("max_val")});
    }
  for (const ProgramInputSpec& spec : out.inputs) {
    if (spec.kind != ProgramInputSpec::Kind::user_input ||
        spec.value.kind != ProgramArgument::Kind::tensor)
      continue;
    const std::string& name = *spec.value.names.front();
    const Json& meta = *graph_tensor_meta(graph, name, entry);
    const std::string where = entry + ": the input " + printable(name, 100);
    ProgramInputMeta m;
    m.name = name;
    m.dtype = schema_dtype(*field(meta, "dtype", where), where);
    for (const Json& size : *list(*field(meta, "sizes", where), where + "'s sizes")) {
      const Json d = dimension_json(size, where);
      ProgramInputMeta::Size s;
      if (d.is_number_integer())
        s.value = d.get<std::int64_t>();
      else
        s.symbol = d.get<std::string>();
      m.sizes.push_back(std::move(s));
    }
    out.input_meta.push_back(std::move(m));
  }
  for (const NamedTensor& t : tensors_) {
    ProgramWeight w;
    w.name = t.name;
    w.kind = t.kind;
    w.dtype = t.dtype;
    w.shape = t.shape;
    w.strides = t.strides.empty() ? contiguous_strides(t.shape) : t.strides;
    w.storage_offset = t.storage_offset;
    w.requires_grad = t.requires_grad;
    w.storage = t.storage;
    out.weights.push_back(std::move(w));
  }
  return out;
}

}  // namespace export_detail

ExportProgram read_export_program(const ZipArchive& zip, const std::string& model) {
  const auto layout = export_layout(zip);
  if (!layout) throw Error(zip.path() + ": not a torch.export archive");
  if (*layout == ExportLayout::aoti_package)
    throw Error(zip.path() + ": an AOTInductor package (compiled code, no exported program), " +
                "which this tool does not run");
  try {
    return export_detail::ExportReader(zip, *layout, InspectDetails{}).program(model);
  } catch (const export_detail::Malformed& m) {
    throw Error(zip.path() + ": a torch.export archive that cannot be read: " + m.why);
  }
}

std::string ProgramStorages::read(const std::string& storage) {
  // a member of the archive (raw storages, torch 2.9 on), or ENTRY:KEY in a nested torch.save
  if (const auto member = zip_.find(storage))
    return zip_.read(*member, zip_.entries()[*member].size, printable(storage, 200));
  const std::size_t colon = storage.find(':');
  const std::string entry = storage.substr(0, colon);
  const auto nested = colon == std::string::npos ? std::nullopt : zip_.find(entry);
  if (!nested) throw Error(zip_.path() + ": no storage " + printable(storage, 200));
  auto& inner = nested_[entry];
  if (!inner) {
    ZipArchive::Member bytes = zip_.open(*nested, entry);
    const InputFilePtr file = InputFile::from_pieces(
        zip_.path() + ": " + entry, [&](char* out, std::size_t n) { return bytes.read(out, n); });
    inner = std::make_unique<ZipArchive>(file);
  }
  const std::string record = inner->first_folder() + "data/" + storage.substr(colon + 1);
  const auto index = inner->find(record);
  if (!index) throw Error(inner->path() + ": no storage " + printable(record, 200));
  return inner->read(*index, inner->entries()[*index].size, printable(record, 200));
}

std::optional<std::pair<std::string, std::string>> operator_of_target(const std::string& target) {
  static constexpr std::string_view kPrefix = "torch.ops.";
  if (target.rfind(kPrefix, 0) != 0) return std::nullopt;
  const std::string rest = target.substr(kPrefix.size());
  const std::size_t first = rest.find('.');
  const std::size_t last = rest.rfind('.');
  if (first == std::string::npos || last == first || first == 0 || last + 1 == rest.size())
    return std::nullopt;
  const std::string overload = rest.substr(last + 1);
  return std::pair(rest.substr(0, first) + "::" + rest.substr(first + 1, last - first - 1),
                   overload == "default" ? "" : overload);
}

}  // namespace vin::diagnostics
