#include "vin/diagnostics/archive/export_archive.h"

#include <algorithm>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <unordered_map>
#include <utility>
#include <vector>

#include "vin/diagnostics/archive/export_module_stack.h"
#include "vin/diagnostics/archive/module_details.h"
#include "vin/diagnostics/archive/pickle_reader.h"
#include "vin/diagnostics/archive/saved_tensor.h"
#include "vin/diagnostics/archive/torch_save_file.h"
#include "vin/diagnostics/records/bounded_json.h"
#include "vin/diagnostics/records/error.h"
#include "vin/diagnostics/records/module_counts.h"
#include "vin/diagnostics/text/dtypes.h"
#include "vin/diagnostics/text/printable.h"
#include "vin/diagnostics/text/type_names.h"

namespace vin::diagnostics {
namespace {

// the program of a real model is a few MB (resnet18's: 1 MB); its values nest a few levels, a
// control-flow subgraph (as_graph) a few more per level
constexpr std::uint64_t kMaxProgramBytes = std::uint64_t{256} << 20;
constexpr std::uint64_t kMaxConfigBytes = std::uint64_t{64} << 20;
constexpr std::size_t kMaxProgramDepth = 2048;
// a nested torch.save's data.pkl: names and tensor descriptions, never the data
constexpr std::uint64_t kMaxStatePickleBytes = std::uint64_t{256} << 20;
// the newest schema this reader knows (torch 2.14 writes 8.20)
constexpr std::int64_t kNewestSchemaMajor = 8;

// An entry of the archive that is not what torch writes: the message names it (contract 10.4).
struct Malformed {
  std::string why;
};

// torch 2.1-2.2 and 2.6 write the floats inf and nan as bare tokens (Python's json allow_nan),
// which JSON has not: each becomes the string 2.7 on writes, outside strings only
std::string with_quoted_non_finite(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  bool in_string = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      out += c;
      if (c == '\\' && i + 1 < text.size())
        out += text[++i];
      else if (c == '"')
        in_string = false;
      continue;
    }
    if (c == '"') in_string = true;
    bool replaced = false;
    for (std::string_view token : {"-Infinity", "Infinity", "NaN"})
      if (text.compare(i, token.size(), token) == 0) {
        out += '"';
        out += token;
        out += '"';
        i += token.size() - 1;
        replaced = true;
        break;
      }
    if (!replaced) out += c;
  }
  return out;
}

Json parse_json_entry(const std::string& text, const std::string& entry) {
  try {
    return parse_bounded_json(with_quoted_non_finite(text), kMaxProgramDepth);
  } catch (const JsonTooDeep&) {
    throw Malformed{entry + " nests values more than " + std::to_string(kMaxProgramDepth) +
                    " levels deep"};
  } catch (const Json::exception&) {
    throw Malformed{entry + " is not valid JSON"};
  }
}

// A pointer, never null, rather than a reference: GCC 14's -Wdangling-reference takes a
// reference returned from a call with a temporary message for one into the message
const Json* field(const Json& object, const char* key, const std::string& where) {
  if (!object.is_object() || !object.contains(key) || object[key].is_null())
    throw Malformed{where + " has no " + key};
  return &object[key];
}

const Json* optional_field(const Json& object, const char* key) {
  if (!object.is_object()) return nullptr;
  const auto it = object.find(key);
  return it == object.end() || it->is_null() ? nullptr : &*it;
}

std::string string_field(const Json& object, const char* key, const std::string& where) {
  const Json& v = *field(object, key, where);
  if (!v.is_string()) throw Malformed{where + "'s " + key + " is not a string"};
  return v.get<std::string>();
}

// A union as the schema writes it: an object of one key (2.3 on), or of every variant with the
// unused ones null (2.1-2.2). The variant's name and value.
std::pair<std::string, const Json*> union_variant(const Json& value, const std::string& where) {
  if (!value.is_object() || value.empty()) throw Malformed{where + " is a union with no field"};
  if (value.size() == 1) return {value.begin().key(), &value.begin().value()};
  std::pair<std::string, const Json*> found{"", nullptr};
  for (auto it = value.begin(); it != value.end(); ++it) {
    if (it->is_null()) continue;
    if (found.second) throw Malformed{where + " is a union with two fields"};
    found = {it.key(), &it.value()};
  }
  if (!found.second) throw Malformed{where + " is a union with no field"};
  return found;
}

// The schema's ScalarType (torch/_export/serde/schema.py), not c10's numbering past 13.
const Dtype* schema_dtype(const Json& value, const std::string& where) {
  static const std::map<std::int64_t, std::string_view> kNames = {{1, "uint8"},
                                                                  {2, "int8"},
                                                                  {3, "int16"},
                                                                  {4, "int32"},
                                                                  {5, "int64"},
                                                                  {6, "float16"},
                                                                  {7, "float32"},
                                                                  {8, "float64"},
                                                                  {9, "complex32"},
                                                                  {10, "complex64"},
                                                                  {11, "complex128"},
                                                                  {12, "bool"},
                                                                  {13, "bfloat16"},
                                                                  {28, "uint16"},
                                                                  {29, "float8_e4m3fn"},
                                                                  {30, "float8_e5m2"},
                                                                  {31, "float8_e4m3fnuz"},
                                                                  {32, "float8_e5m2fnuz"},
                                                                  {34, "uint32"},
                                                                  {35, "uint64"}};
  if (!value.is_number_integer()) throw Malformed{where + " has a dtype that is not an integer"};
  const auto it = kNames.find(value.get<std::int64_t>());
  const Dtype* dtype = it == kNames.end() ? nullptr : dtype_named(it->second);
  if (!dtype)
    throw Malformed{where + " has dtype " + std::to_string(value.get<std::int64_t>()) +
                    ", which this reader does not know"};
  return dtype;
}

// A size: {as_int: n} (or a bare integer, as 2.1-2.2 wrote storage_offset).
std::int64_t concrete_size(const Json& value, const std::string& where) {
  if (value.is_number_integer()) return value.get<std::int64_t>();
  const auto [variant, v] = union_variant(value, where);
  if (variant == "as_int" && v->is_number_integer()) return v->get<std::int64_t>();
  if (variant == "as_expr") throw Malformed{where + " has a symbolic size"};
  throw Malformed{where + " has a size that is not an integer"};
}

// One parameter, buffer or constant: its TensorMeta and the storage it lies in.
struct NamedTensor {
  std::string name;  // dotted from the root: "layer1.0.conv1.weight"
  std::string kind;  // "parameter", "buffer" or "constant"
  const Dtype* dtype = nullptr;
  std::vector<std::int64_t> shape;
  std::vector<std::int64_t> strides;  // none recorded: contiguous
  std::int64_t storage_offset = 0;
  std::int64_t numel = 1;
  std::string device = "cpu";
  bool requires_grad = false;
  std::string storage;               // one key per storage: tied names share it
  std::optional<std::uint32_t> crc;  // of the member holding its storage, where one does
  std::optional<std::uint32_t> data_crc;  // of its elements (with --tensors)

  // Which tensor it is: tied names are one tensor (counted once), views of one storage with
  // other offsets or sizes are not (Python's parameters() yields each).
  std::string identity() const {
    std::string id = storage + "@" + std::to_string(storage_offset);
    for (const std::int64_t n : shape) id += "," + std::to_string(n);
    id += "/";
    for (const std::int64_t n : strides) id += "," + std::to_string(n);
    return id;
  }

  // The tensor as torch.save would describe it (strides written out where the program left
  // them implied: contiguous).
  SavedTensor saved_form() const {
    SavedTensor out;
    out.dtype = dtype;
    out.offset = storage_offset;
    out.shape = shape;
    out.numel = numel;
    out.strides = strides.empty() ? contiguous_strides(shape) : strides;
    return out;
  }

  // The bytes of its storage it reaches, from the storage's start (0 for no elements).
  std::uint64_t bytes_reached(const std::string& where) const {
    const SavedTensor s = saved_form();
    if (s.strides.size() != s.shape.size())
      throw Malformed{where + " gives " + std::to_string(s.strides.size()) + " strides for " +
                      std::to_string(s.shape.size()) + " sizes"};
    if (s.offset < 0 || std::any_of(s.strides.begin(), s.strides.end(),
                                    [](std::int64_t stride) { return stride < 0; }))
      throw Malformed{where + "'s strides or offset are negative"};
    const auto reached = vin::diagnostics::bytes_reached(s);
    if (!reached) throw Malformed{where + "'s strides and offset overflow 64 bits"};
    return *reached;
  }
};

void read_tensor_meta(const Json& meta, const std::string& where, NamedTensor& t) {
  t.dtype = schema_dtype(*field(meta, "dtype", where), where);
  const Json& sizes = *field(meta, "sizes", where);
  if (!sizes.is_array()) throw Malformed{where + "'s sizes are not a list"};
  t.shape.clear();
  t.numel = 1;
  for (const Json& s : sizes) {
    const std::int64_t n = concrete_size(s, where);
    if (n < 0) throw Malformed{where + " has a negative size"};
    t.shape.push_back(n);
    if (__builtin_mul_overflow(t.numel, n, &t.numel))
      throw Malformed{where + "'s sizes overflow 64 bits"};
  }
  std::int64_t bytes = 0;
  if (__builtin_mul_overflow(t.numel, std::int64_t{t.dtype->element_size}, &bytes))
    throw Malformed{where + "'s sizes overflow 64 bits"};
  t.strides.clear();
  if (const Json* strides = optional_field(meta, "strides"); strides && strides->is_array()) {
    if (strides->size() != t.shape.size())
      throw Malformed{where + " has " + std::to_string(strides->size()) + " strides for " +
                      std::to_string(t.shape.size()) + " sizes"};
    for (const Json& s : *strides) {
      const std::int64_t n = concrete_size(s, where);
      if (n < 0) throw Malformed{where + " has a negative stride"};
      t.strides.push_back(n);
    }
  }
  t.storage_offset = 0;
  if (const Json* offset = optional_field(meta, "storage_offset")) {
    t.storage_offset = concrete_size(*offset, where);
    if (t.storage_offset < 0) throw Malformed{where + " has a negative storage offset"};
  }
  if (const Json* grad = optional_field(meta, "requires_grad"); grad && grad->is_boolean())
    t.requires_grad = grad->get<bool>();
  if (const Json* device = optional_field(meta, "device")) {
    const Json* type = optional_field(*device, "type");
    if (type && type->is_string()) t.device = type->get<std::string>();
    if (const Json* index = optional_field(*device, "index"); index && index->is_number_integer())
      t.device += ":" + std::to_string(index->get<std::int64_t>());
  }
}

// The TensorMeta the graph records for its tensor `name` (torch 2.1 wraps it: {"meta": ...}).
// A pointer, not a reference: GCC 14's -Wdangling-reference (see field()).
const Json* graph_tensor_meta(const Json& graph, const std::string& name,
                              const std::string& entry) {
  const Json* values = optional_field(graph, "tensor_values");
  const Json* meta = values ? optional_field(*values, name.c_str()) : nullptr;
  if (meta && meta->is_object() && meta->contains("meta") && !meta->contains("dtype"))
    meta = &meta->at("meta");
  if (!meta) throw Malformed{entry + " has no TensorMeta for " + name};
  return meta;
}

// "a.b.c" -> "c"
std::string leaf_name(const std::string& name) { return name.substr(name.rfind('.') + 1); }

// "a.b.c" -> "a.b"; "a" -> "" (the root)
std::string parent_path(const std::string& name) {
  const std::size_t dot = name.rfind('.');
  return dot == std::string::npos ? "" : name.substr(0, dot);
}

// The placeholder name torch.export gives a parameter or buffer: its dotted name with every
// character that is not a letter, digit or '_' as '_', after a prefix ("p_", "b_", "c_")
std::string placeholder_name(std::string_view prefix, const std::string& name) {
  std::string out(prefix);
  for (const char c : name)
    out += std::isalnum(static_cast<unsigned char>(c)) || c == '_' ? c : '_';
  return out;
}

// A symbolic size as Python prints it (str(SymInt): "s0", "2*s0", "s0 + 1") from the sympy
// srepr torch writes ("Mul(Integer(2), Symbol('s0', positive=True, integer=True))"): Symbol,
// Integer, Mul and Add; anything else is given as written.
class SympyText {
 public:
  static std::string of(const std::string& srepr) {
    SympyText p(srepr);
    std::string out;
    if (p.term(out, 0) && p.at_ == srepr.size()) return out;
    return srepr;
  }

 private:
  explicit SympyText(const std::string& text) : text_(text) {}

  bool eat(std::string_view word) {
    if (text_.compare(at_, word.size(), word) != 0) return false;
    at_ += word.size();
    return true;
  }

  // one expression into `out`; false where it is not one of the four forms
  bool term(std::string& out, int depth) {
    if (depth > 64) return false;
    if (eat("Symbol('")) {
      const std::size_t end = text_.find('\'', at_);
      if (end == std::string::npos) return false;
      out += text_.substr(at_, end - at_);
      const std::size_t close = text_.find(')', end);  // the assumptions: `positive=True, ...`
      if (close == std::string::npos) return false;
      at_ = close + 1;
      return true;
    }
    if (eat("Integer(")) {
      const std::size_t end = text_.find(')', at_);
      if (end == std::string::npos || end == at_) return false;
      const std::string digits = text_.substr(at_, end - at_);
      if (digits.find_first_not_of("-0123456789") != std::string::npos) return false;
      out += digits;
      at_ = end + 1;
      return true;
    }
    const bool mul = eat("Mul(");
    if (!mul && !eat("Add(")) return false;
    for (bool first = true;; first = false) {
      std::string operand;
      if (!term(operand, depth + 1)) return false;
      if (first)
        out += operand;
      else if (!mul && operand.rfind('-', 0) == 0)
        out += " - " + operand.substr(1);
      else
        out += (mul ? "*" : " + ") + operand;
      if (eat(")")) return true;
      if (!eat(", ")) return false;
    }
  }

  const std::string& text_;
  std::size_t at_ = 0;
};

// One size of a TensorMeta as a record shows it: an integer, or a symbolic size's expression.
Json dimension_json(const Json& size, const std::string& where) {
  if (size.is_number_integer()) return size;
  const auto [variant, v] = union_variant(size, where);
  if (variant == "as_int" && v->is_number_integer()) return *v;
  if (variant == "as_expr") {
    const Json* expr = v->is_string() ? v : optional_field(*v, "expr_str");
    if (expr && expr->is_string()) return SympyText::of(expr->get<std::string>());
  }
  throw Malformed{where + " has a size that is neither an integer nor an expression"};
}

class ExportReader {
 public:
  ExportReader(const ZipArchive& zip, ExportLayout layout, const InspectDetails& details)
      : zip_(zip), layout_(layout), details_(details) {
    if (layout_ == ExportLayout::pt2_archive) root_ = zip_.first_folder();
  }

  ModelMetadata read(const std::string& wanted) {
    ExportArchive archive;
    archive.file = zip_.path();
    archive.layout = layout_ == ExportLayout::export_zip ? "export_zip" : "pt2_archive";
    archive.models = model_names();
    archive.extra_files = extra_files();
    const std::string model = chosen_model(archive.models, wanted);
    const std::string entry = program_entry(model);
    const auto index = zip_.find(entry);
    if (!index) throw Malformed{entry + " is missing"};
    const Json program = parse_json_entry(zip_.read(*index, kMaxProgramBytes, entry), entry);
    archive.schema_version = schema_version(program, entry);
    if (const Json* v = optional_field(program, "torch_version"); v && v->is_string())
      archive.torch_version = v->get<std::string>();
    const Json& graph_module = *field(program, "graph_module", entry);
    const Json& graph = *field(graph_module, "graph", entry + ": graph_module");
    // the modules the program names first (a tied parameter's name is recovered among them),
    // then in named_modules() order: module_call_graph's (that order in torch 2.6 on), the
    // tensors' (the state dict's order), the nodes'
    const auto [called, stacked] = module_paths(graph_module, graph, entry);
    for (const auto& paths : {called, stacked})
      for (const std::string& p : paths) known_modules_.insert(p);
    read_tensors(graph_module, graph, model, entry);
    for (const std::string& p : called) add_path(p);
    // the state dict's order first (registration order: an unused module's parameters, which
    // the signature leaves out, among the others), then the tensors only the signature names
    for (const std::string& name : state_dict_order_) add_path(parent_path(name));
    for (const NamedTensor& t : tensors_) add_path(parent_path(t.name));
    add_executed_paths(stacked);
    ModelMetadata out = describe();
    ModelDetails details = out.details();
    details.export_archive = std::move(archive);
    if (details_.operators) details.operators = operator_counts(graph, entry);
    if (details_.signature) {
      details.graph_signature = graph_signature(graph_module, entry);
      details.methods =
          std::vector<MethodSignature>{forward_signature(program, graph_module, graph, entry)};
    }
    return ModelMetadata(out.model_type(), out.total_parameters(), out.trainable_parameters(),
                         out.modules(), std::move(details));
  }

 private:
  std::vector<std::string> model_names() const {
    if (layout_ == ExportLayout::export_zip) return {"model"};
    std::vector<std::string> names;
    const std::string folder = root_ + "models/";
    for (const auto& e : zip_.entries()) {
      if (e.name.rfind(folder, 0) != 0) continue;
      const std::string rest = e.name.substr(folder.size());
      if (rest.size() > 5 && rest.find('/') == std::string::npos &&
          rest.compare(rest.size() - 5, 5, ".json") == 0)
        names.push_back(rest.substr(0, rest.size() - 5));
    }
    return names;
  }

  std::vector<std::string> extra_files() const {
    const std::string folder =
        layout_ == ExportLayout::export_zip ? "extra_files/" : root_ + "extra/";
    std::vector<std::string> names;
    for (const auto& e : zip_.entries())
      if (e.name.rfind(folder, 0) == 0 && e.name.size() > folder.size() && e.name.back() != '/')
        names.push_back(e.name.substr(folder.size()));
    std::sort(names.begin(), names.end());
    return names;
  }

  std::string chosen_model(const std::vector<std::string>& names, const std::string& wanted) const {
    const auto listed = [&] {
      std::string all;
      for (const auto& n : names) all += (all.empty() ? "" : ", ") + n;
      return all;
    };
    if (names.empty()) throw Malformed{root_ + "models/ holds no program"};
    if (!wanted.empty()) {
      if (std::find(names.begin(), names.end(), wanted) == names.end())
        throw UsageError("--model " + wanted + ": " + zip_.path() + " holds no such model (it " +
                         "holds " + listed() + ")");
      return wanted;
    }
    if (names.size() == 1) return names.front();
    if (std::find(names.begin(), names.end(), "model") != names.end()) return "model";
    throw UsageError(zip_.path() + " holds several models (" + listed() +
                     "): --model NAME says which");
  }

  std::string program_entry(const std::string& model) const {
    return layout_ == ExportLayout::export_zip ? "serialized_exported_program.json"
                                               : root_ + "models/" + model + ".json";
  }

  static std::string schema_version(const Json& program, const std::string& entry) {
    const Json* v = optional_field(program, "schema_version");
    if (!v) throw Malformed{entry + " has no schema_version"};
    std::int64_t major = 0;
    std::string text;
    if (v->is_number_integer()) {  // torch 2.1 and 2.2: 1 and 2
      major = v->get<std::int64_t>();
      text = std::to_string(major);
    } else {
      const Json& m = *field(*v, "major", entry + ": schema_version");
      const Json& n = *field(*v, "minor", entry + ": schema_version");
      if (!m.is_number_integer() || !n.is_number_integer())
        throw Malformed{entry + "'s schema_version is not two integers"};
      major = m.get<std::int64_t>();
      text = std::to_string(major) + "." + std::to_string(n.get<std::int64_t>());
    }
    if (major > kNewestSchemaMajor || major < 0)
      throw Malformed{entry + " has schema version " + text + "; the newest this reader " +
                      "understands is " + std::to_string(kNewestSchemaMajor) + ".x"};
    return text;
  }

  // the parameters, buffers and constants: by the graph signature's names, with the TensorMeta
  // of their placeholders; a PT2 Archive's weights config where it has one (2.9 on: the storage
  // each lies in, tied names sharing one)
  void read_tensors(const Json& graph_module, const Json& graph, const std::string& model,
                    const std::string& entry) {
    const std::string where = entry + ": the graph signature";
    const Json& signature = *field(graph_module, "signature", entry + ": graph_module");
    const Json* specs = optional_field(signature, "input_specs");
    if (!specs || !specs->is_array()) throw Malformed{where + " has no input_specs"};
    struct Spec {
      std::string kind, name, arg;
    };
    std::vector<Spec> found;
    for (const Json& spec : *specs) {
      const auto [variant, v] = union_variant(spec, where + "'s input");
      Spec s;
      if (variant == "parameter")
        s = {"parameter", string_field(*v, "parameter_name", where), ""};
      else if (variant == "buffer")
        s = {"buffer", string_field(*v, "buffer_name", where), ""};
      else if (variant == "tensor_constant")
        s = {"constant", string_field(*v, "tensor_constant_name", where), ""};
      else
        continue;  // user inputs, custom objects, tokens, constant inputs
      const Json& arg = *field(*v, "arg", where + "'s " + variant);
      s.arg = arg.is_string() ? arg.get<std::string>() : string_field(arg, "name", where);
      found.push_back(std::move(s));
    }
    // torch 2.6 names both parameters of a tied pair by the last name (the signature of a
    // shared embedding and output weight says "out.weight" twice): each placeholder's own name
    // says which it is ("p_embed_weight"), among the names that make it
    std::map<std::string, int> seen;
    for (const Spec& s : found) ++seen[s.name];
    for (Spec& s : found) {
      std::string storage = s.name;
      if (seen[s.name] > 1 && s.kind == "parameter") {
        const std::string leaf = leaf_name(s.name);
        const std::string prefix = s.arg.substr(0, s.arg.find('_') + 1);
        std::string own = recover_tied_name(s.arg, prefix, leaf);
        if (!own.empty()) s.name = own;
      }
      if (tensor_named(s.name)) continue;  // the same slot twice
      NamedTensor t;
      t.name = s.name;
      t.kind = s.kind;
      t.storage = storage;
      const std::string meta_where = entry + ": the tensor " + s.arg;
      read_tensor_meta(*graph_tensor_meta(graph, s.arg, entry), meta_where, t);
      add_tensor(std::move(t));
    }
    if (layout_ == ExportLayout::pt2_archive) {
      const bool configs = read_weights_config(
          root_ + "data/weights/" + model + "_weights_config.json", root_ + "data/weights/");
      read_weights_config(root_ + "data/constants/" + model + "_constants_config.json",
                          root_ + "data/constants/");
      if (!configs) {  // torch 2.8: nested torch.save files
        read_nested_state(root_ + "data/weights/" + model + ".pt", "parameter");
        read_nested_state(root_ + "data/constants/" + model + ".pt", "constant");
      }
    } else {
      // 2.3-2.7 name them .pt, 2.1-2.2 .json (torch.save bytes all the same)
      for (const char* name : {"serialized_state_dict.pt", "serialized_state_dict.json"})
        read_nested_state(name, "parameter");
      for (const char* name : {"serialized_constants.pt", "serialized_constants.json"})
        read_nested_state(name, "constant");
    }
  }

  // the tied parameter whose placeholder is `arg`: a name MODULE.LEAF, MODULE one of the
  // modules the program names, whose placeholder is `arg`
  std::string recover_tied_name(const std::string& arg, const std::string& prefix,
                                const std::string& leaf) const {
    for (const std::string& module : known_modules_) {
      const std::string name = module.empty() ? leaf : module + "." + leaf;
      if (placeholder_name(prefix, name) == arg) return name;
    }
    // the placeholder alone: p_embed_weight is embed.weight where "embed" holds no '_'
    if (arg.size() > prefix.size() + leaf.size() + 1 &&
        arg.compare(arg.size() - leaf.size() - 1, leaf.size() + 1, "_" + leaf) == 0) {
      std::string module = arg.substr(prefix.size(), arg.size() - prefix.size() - leaf.size() - 1);
      if (module.find('_') == std::string::npos) return module + "." + leaf;
    }
    return "";
  }

  // data/weights/<model>_weights_config.json (torch 2.9 on): {"config": {name: {path_name,
  // is_param, use_pickle, tensor_meta}}}; the raw storage is the member FOLDER + path_name
  bool read_weights_config(const std::string& entry, const std::string& folder) {
    const auto index = zip_.find(entry);
    if (!index) return false;  // 2.8: nested torch.save files instead
    const Json config = parse_json_entry(zip_.read(*index, kMaxConfigBytes, entry), entry);
    const Json* entries = optional_field(config, "config");
    if (!entries || !entries->is_object()) throw Malformed{entry + " has no config"};
    for (auto it = entries->begin(); it != entries->end(); ++it) {
      const std::string where = entry + ": " + it.key();
      const std::string path = string_field(*it, "path_name", where);
      if (path.empty() || path.find('/') != std::string::npos || path == "." || path == "..")
        throw Malformed{where + " names the member '" + path + "', outside " + folder};
      const auto member = zip_.find(folder + path);
      if (!member) throw Malformed{where + " names " + folder + path + ", which is missing"};
      NamedTensor* named = tensor_named(it.key());
      if (!named) continue;  // a name the signature does not use
      NamedTensor& t = *named;
      t.storage = folder + path;
      // the config's TensorMeta places the tensor in its storage (views of one storage share a
      // member, each with its offset and sizes)
      if (const Json* meta = optional_field(*it, "tensor_meta"); meta && meta->is_object())
        read_tensor_meta(*meta, where, t);
      const Json* use_pickle = optional_field(*it, "use_pickle");
      if (!(use_pickle && use_pickle->is_boolean() && use_pickle->get<bool>())) {
        t.crc = zip_.entries()[*member].crc;
        // the storage must hold what the tensor's metadata reaches
        const std::uint64_t size = zip_.entries()[*member].size;
        const std::uint64_t need = t.bytes_reached(where);
        if (size < need)
          throw Malformed{where + ": " + folder + path + " holds " + std::to_string(size) +
                          " bytes, fewer than the " + std::to_string(need) + " its tensor reaches"};
        if (details_.tensors) {
          InputFilePtr inflated;
          t.data_crc = elements_crc32(t.saved_form(), member_bytes(zip_, *member, false, inflated));
        }
      }
    }
    return true;
  }

  // A nested torch.save of {name: tensor} (the state dict, or the constants), read by the one
  // torch.save reader (torch_save_file.h): the storage each tensor lies in (tied names share
  // one), its record's CRC and, with --tensors, its elements' CRC, and the tensors the
  // signature does not list (the parameters of a module no node uses stay in the state dict).
  // `unlisted_kind`: what such a tensor is when its pickle does not say (constants file).
  void read_nested_state(const std::string& entry, const std::string& unlisted_kind) {
    const auto index = zip_.find(entry);
    if (!index) return;
    ZipArchive::Member member = zip_.open(*index, entry);
    const InputFilePtr file = InputFile::from_pieces(
        zip_.path() + ": " + entry, [&](char* out, std::size_t n) { return member.read(out, n); });
    try {
      const ZipArchive inner(file);
      const TorchSaveZip saved(inner, entry, kMaxStatePickleBytes);
      const PickleValue* root = saved.root();
      if (!root || root->kind != PickleValue::Kind::dict) return;  // no tensors by name
      // each storage's first name and description: a second name must describe it alike
      std::unordered_map<std::string, std::pair<std::string, SavedTensor>> storages;
      for (std::size_t i = 0; i + 1 < root->items.size(); i += 2) {
        const PickleValue* key = root->items[i];
        const PickleValue* value = root->items[i + 1];
        if (key->kind != PickleValue::Kind::string || value->kind != PickleValue::Kind::tensor ||
            !storage_dtype(value->items[0]->text))
          continue;
        const std::string where = "the tensor " + printable(key->text, 200);
        const SavedTensor tensor = saved_tensor(value, entry + ": " + where);
        const StorageBytes bytes = saved.storage(tensor, where);
        const auto [first, added] = storages.try_emplace(tensor.storage_key, key->text, tensor);
        if (!added) same_storage(first->second, {key->text, tensor}, inner, entry);
        if (unlisted_kind != "constant") state_dict_order_.push_back(key->text);
        NamedTensor* t = tensor_named(key->text);
        if (!t) {
          NamedTensor added;
          added.name = key->text;
          added.kind = unlisted_kind == "constant" ? "constant"
                       : tensor.parameter          ? "parameter"
                                                   : "buffer";
          added.dtype = tensor.dtype;
          added.numel = tensor.numel;
          added.requires_grad = tensor.requires_grad;
          added.shape = tensor.shape;
          if (tensor.device) added.device = *tensor.device;
          t = &add_tensor(std::move(added));
        } else if (tensor.parameter) {
          // an nn.Parameter saved as one (_rebuild_parameter) carries its requires_grad; the
          // graph's TensorMeta of its placeholder need not (torch 2.2 wrote false for every
          // parameter, a trained model's too), and the state is what the model holds
          t->requires_grad = tensor.requires_grad;
        }
        t->storage = entry + ":" + tensor.storage_key;
        t->storage_offset = tensor.offset;
        t->strides = tensor.strides;
        t->crc = bytes.crc;
        if (details_.tensors) t->data_crc = elements_crc32(tensor, bytes);
      }
    } catch (const Error& e) {
      throw Malformed{e.what()};
    }
  }

  // Two names of one storage (a tied weight's) must describe it alike: torch.load keeps the
  // first description and reads the second name's tensor through it, so storages whose
  // dtypes or sizes differ are not what torch writes (contract 10.4)
  static void same_storage(const std::pair<std::string, SavedTensor>& first,
                           const std::pair<std::string, SavedTensor>& second,
                           const ZipArchive& inner, const std::string& entry) {
    const SavedTensor& a = first.second;
    const SavedTensor& b = second.second;
    if (a.dtype == b.dtype && a.storage_numel == b.storage_numel) return;
    const auto size = [](const SavedTensor& t) {
      return std::to_string(t.storage_numel) + " " + std::string(t.dtype->name);
    };
    throw Malformed{entry + ": the tensors " + printable(first.first, 200) + " and " +
                    printable(second.first, 200) + " name one storage, " +
                    printable(inner.first_folder() + "data/" + a.storage_key, 200) +
                    ", with different sizes (" + size(a) + " and " + size(b) + " elements)"};
  }

  // the module paths of module_call_graph, and those of the nodes' nn_module_stack (with the
  // types of their modules), each in the order met; each node's innermost module, for the
  // operators
  std::pair<std::vector<std::string>, std::vector<std::string>> module_paths(
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
  static std::set<std::string> named_modules(const Json& graph_module,
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
  static std::string node_name(const Json& node, std::size_t index) {
    if (const Json* name = optional_field(node, "name"); name && name->is_string())
      return "the node " + printable(name->get<std::string>(), 100);
    std::string out = "node " + std::to_string(index);
    if (const Json* target = optional_field(node, "target"); target && target->is_string())
      out += " (" + printable(target->get<std::string>(), 100) + ")";
    return out;
  }

  // one input_specs or output_specs list as written: each spec's kind, names and target,
  // and its argument
  struct Spec {
    GraphSignatureEntry entry;
    const Json* arg = nullptr;
    const Json* value = nullptr;  // a constant_input's ConstantValue
  };
  static std::vector<Spec> specs(const Json& graph_module, const char* key,
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
  static GraphSignature graph_signature(const Json& graph_module, const std::string& entry) {
    GraphSignature out;
    for (Spec& s : specs(graph_module, "input_specs", entry)) out.inputs.push_back(s.entry);
    for (Spec& s : specs(graph_module, "output_specs", entry)) out.outputs.push_back(s.entry);
    return out;
  }

  // forward as the program takes it: one argument per user input, in order (a tensor's
  // dtype and shape from the graph's TensorMeta), the user outputs, and range_constraints'
  // symbols with their ranges
  static MethodSignature forward_signature(const Json& program, const Json& graph_module,
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
  static ReturnSignature user_value(const Json& arg, const Json& graph, const std::string& entry) {
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
  static std::string argument_type(const std::string& variant, const Json& value) {
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
  static std::optional<std::string> argument_name(const Json& arg) {
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
  std::vector<OperatorCount> operator_counts(const Json& graph, const std::string& entry) const {
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

  // the tensors by name, each name once
  NamedTensor* tensor_named(const std::string& name) {
    const auto it = tensor_index_.find(name);
    return it == tensor_index_.end() ? nullptr : &tensors_[it->second];
  }
  NamedTensor& add_tensor(NamedTensor t) {
    tensor_index_.emplace(t.name, tensors_.size());
    tensors_.push_back(std::move(t));
    return tensors_.back();
  }

  void add_path(const std::string& path) {
    if (!paths_.insert(path).second) return;
    // its ancestors first, each under its parent in the order first met
    if (!path.empty()) {
      const std::string parent = parent_path(path);
      add_path(parent);
      children_[parent].push_back(path);
    }
  }

  // The modules only the nodes name (no tensor of theirs, and a call graph of the root alone,
  // as torch 2.1-2.5 wrote it): each placed among its siblings after the sibling that ran
  // before it (first among them if none did), so a ReLU between two Linears of a Sequential,
  // or a pooling layer between a body and a head, stays where the model registered it.
  void add_executed_paths(const std::vector<std::string>& executed) {
    std::unordered_map<std::string, std::string> last_run;  // parent -> the child that ran last
    for (const std::string& path : executed) {
      if (path.empty()) continue;
      const std::string parent = parent_path(path);
      if (paths_.insert(path).second) {
        add_path(parent);
        std::vector<std::string>& siblings = children_[parent];
        auto at = siblings.begin();  // first, where no sibling ran before it
        if (const auto before = last_run.find(parent); before != last_run.end()) {
          at = std::find(siblings.begin(), siblings.end(), before->second);
          if (at != siblings.end()) ++at;
        }
        siblings.insert(at, path);
      }
      last_run[parent] = path;
    }
  }

  ModelMetadata describe() const {
    // tensors by the module that registers them
    std::map<std::string, std::vector<const NamedTensor*>> by_module;
    for (const NamedTensor& t : tensors_) by_module[parent_path(t.name)].push_back(&t);
    ModelCounts<std::string> counts;
    std::vector<ModuleMetadata> modules;
    const std::function<void(const std::string&)> visit = [&](const std::string& path) {
      DirectCounts direct;
      std::vector<TensorMetadata> listed;
      const auto own = by_module.find(path);
      for (const char* kind : {"parameter", "buffer", "constant"}) {
        if (own == by_module.end()) break;
        for (const NamedTensor* t : own->second) {
          if (t->kind != kind) continue;
          const std::int64_t nbytes = t->numel * t->dtype->element_size;
          if (t->kind == std::string("parameter"))
            counts.parameter(direct, t->identity(), t->numel, t->requires_grad, nbytes);
          else if (t->kind == std::string("buffer"))
            counts.buffer(direct, t->identity(), t->numel, nbytes);
          if (details_.tensors) {
            TensorMetadata m;
            m.name = leaf_name(t->name);
            m.kind = t->kind;
            m.shape = t->shape;
            m.dtype = t->dtype->python_name();
            m.device = t->device;
            m.requires_grad = t->requires_grad;
            m.numel = t->numel;
            m.nbytes = nbytes;
            if (t->crc) m.storage_crc32 = crc32_text(*t->crc);
            if (t->data_crc) m.data_crc32 = crc32_text(*t->data_crc);
            listed.push_back(std::move(m));
          }
        }
      }
      const auto type = types_.find(path);
      ModuleDetails module_details;
      if (details_.tensors) module_details.tensors = std::move(listed);
      if (details_.attributes) module_details.attributes = Json::object();  // export has none
      modules.emplace_back(
          path.empty() ? kRootPath : path,
          type == types_.end() ? std::nullopt : std::optional<std::string>(type->second),
          direct.parameters, direct.trainable, direct.buffers, std::nullopt,
          std::move(module_details));
      if (const auto kids = children_.find(path); kids != children_.end())
        for (const std::string& child : kids->second) visit(child);
    };
    visit("");
    ModelDetails details;
    if (details_.tensors) counts.put_bytes(details);
    const auto root_type = types_.find("");
    return ModelMetadata(
        root_type == types_.end() ? std::nullopt : std::optional<std::string>(root_type->second),
        counts.total(), counts.trainable(), std::move(modules), std::move(details));
  }

  const ZipArchive& zip_;
  ExportLayout layout_;
  InspectDetails details_;
  std::string root_;  // the PT2 Archive's root folder, with its '/'
  std::vector<NamedTensor> tensors_;
  std::unordered_map<std::string, std::size_t> tensor_index_;  // into tensors_
  std::vector<std::string> state_dict_order_;  // a nested torch.save state dict's names
  std::set<std::string> paths_;
  std::set<std::string> known_modules_;  // the modules the program names
  std::unordered_map<std::string, std::vector<std::string>> children_;
  std::unordered_map<std::string, std::string> types_;
  std::vector<std::string> node_modules_;  // each node's innermost module ("" the root)
};

// The platform a compiled library was built for, as Python's sysconfig.get_platform() names it,
// from its first bytes (an ELF, PE or Mach-O header); nothing for another file.
std::optional<std::string> library_platform(std::string_view head) {
  const auto u16 = [&](std::size_t at) {
    return static_cast<unsigned>(static_cast<unsigned char>(head[at])) |
           static_cast<unsigned>(static_cast<unsigned char>(head[at + 1])) << 8;
  };
  if (head.size() >= 20 &&
      head.compare(0, 4,
                   "\x7f"
                   "ELF") == 0 &&
      head[5] == 1) {
    static const std::map<unsigned, std::string> kMachines = {
        {3, "i686"},    {20, "ppc"},    {21, "ppc64le"},  {22, "s390x"},
        {40, "armv7l"}, {62, "x86_64"}, {183, "aarch64"}, {243, "riscv64"}};
    const auto it = kMachines.find(u16(18));
    return "linux-" + (it == kMachines.end() ? "e_machine" + std::to_string(u16(18)) : it->second);
  }
  if (head.size() >= 8 && (head.compare(0, 4, "\xcf\xfa\xed\xfe") == 0)) {
    const unsigned cpu = u16(4);
    return std::string("macosx-") + (cpu == 7 ? "x86_64" : cpu == 12 ? "arm64" : "unknown");
  }
  if (head.size() >= 2 && head.compare(0, 2, "MZ") == 0) return std::string("win");
  return std::nullopt;
}

// An AOTInductor package: each compiled model under data/aotinductor/ with the device its
// metadata names, and its platform (the metadata's, else its library's header)
ExportArchive aoti_package(const ZipArchive& zip) {
  ExportArchive archive;
  archive.file = zip.path();
  archive.layout = "aoti_package";
  const std::string top = zip.find(zip.first_folder() + "archive_format") ? zip.first_folder() : "";
  const std::string folder = top + "data/aotinductor/";
  std::map<std::string, AotiModel> models;
  for (std::size_t index = 0; index < zip.entries().size(); ++index) {
    const auto& e = zip.entries()[index];
    if (e.name.rfind(folder, 0) != 0) continue;
    const std::string rest = e.name.substr(folder.size());
    const std::size_t slash = rest.find('/');
    if (slash == std::string::npos) continue;
    AotiModel& model = models[rest.substr(0, slash)];
    model.model = rest.substr(0, slash);
    const auto ends_with = [&](std::string_view tail) {
      return rest.size() > tail.size() &&
             rest.compare(rest.size() - tail.size(), tail.size(), tail) == 0;
    };
    try {
      if (ends_with("_metadata.json")) {
        const auto text = zip.read(e.name, kMaxConfigBytes);
        const Json meta = text ? parse_bounded_json(*text, 16) : Json();
        if (const Json* v = optional_field(meta, "AOTI_DEVICE_KEY"); v && v->is_string())
          model.device = v->get<std::string>();
        if (const Json* v = optional_field(meta, "AOTI_PLATFORM"); v && v->is_string())
          model.platform = v->get<std::string>();
      } else if ((ends_with(".so") || ends_with(".dll") || ends_with(".dylib")) &&
                 !model.platform) {
        char head[64] = {};
        ZipArchive::Member member = zip.open(index, e.name);
        model.platform = library_platform(std::string_view(head, member.read(head, sizeof head)));
      }
    } catch (const JsonTooDeep&) {
    } catch (const Json::exception&) {
    }
  }
  archive.aoti.emplace();
  for (auto& [name, model] : models) {
    archive.models.push_back(name);
    archive.aoti->push_back(std::move(model));
  }
  return archive;
}

}  // namespace

std::optional<ExportLayout> export_layout(const ZipArchive& zip) {
  const std::string top = zip.first_folder();
  if (!top.empty() && zip.find(top + "archive_format")) {
    // compiled models and no program: a package; else a PT2 Archive, whatever it lacks
    if (!zip.has_entry_under(top + "models/") && zip.has_entry_under(top + "data/aotinductor/"))
      return ExportLayout::aoti_package;
    return ExportLayout::pt2_archive;
  }
  if (zip.find("serialized_exported_program.json")) return ExportLayout::export_zip;
  if (zip.find("archive_format") && zip.has_entry_under("data/aotinductor/"))
    return ExportLayout::aoti_package;
  return std::nullopt;
}

ModelMetadata read_export_archive(const ZipArchive& zip, const InspectDetails& details,
                                  const std::string& model) {
  const auto layout = export_layout(zip);
  if (!layout) throw Error(zip.path() + ": not a torch.export archive");
  if (*layout == ExportLayout::aoti_package) {
    ExportArchive archive = aoti_package(zip);
    std::string listed;
    for (const AotiModel& m : *archive.aoti) {
      std::string where = m.device.value_or("");
      if (m.platform) where += (where.empty() ? "" : ", ") + *m.platform;
      listed += (listed.empty() ? "" : "; ") + m.model + (where.empty() ? "" : " (" + where + ")");
    }
    const std::string why =
        zip.path() + ": an AOTInductor package (compiled code, no exported program) " +
        (listed.empty() ? std::string("holding no model") : "holding " + listed) +
        "; it has no modules to describe: torch.export.save of the ExportedProgram "
        "(before torch._inductor.aoti_compile_and_package) makes a .pt2 this tool reads";
    throw UndescribedArchive(std::move(archive), why);
  }
  try {
    return ExportReader(zip, *layout, details).read(model);
  } catch (const Malformed& m) {
    throw Error(zip.path() + ": a torch.export archive that cannot be read: " + m.why);
  }
}

}  // namespace vin::diagnostics
