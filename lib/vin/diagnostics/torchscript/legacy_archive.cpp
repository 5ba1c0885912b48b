#include "vin/diagnostics/torchscript/legacy_archive.h"

#include <cstdio>
#include <limits>
#include <optional>
#include <unordered_set>
#include <utility>
#include <vector>

#include "vin/diagnostics/torchscript/class_source.h"
#include "vin/diagnostics/torchscript/module_details.h"
#include "vin/diagnostics/pickle/saved_tensor.h"
#include "vin/diagnostics/torch_save/torch_save_file.h"
#include "vin/diagnostics/pickle/pickle_reader.h"
#include "vin/diagnostics/pickle/pickle_safety.h"
#include "vin/diagnostics/torchscript/torchscript_literal.h"
#include "vin/diagnostics/json/bounded_json.h"
#include "vin/diagnostics/records/detail_budget.h"
#include "vin/diagnostics/records/error.h"
#include "vin/diagnostics/json/json_encoding.h"
#include "vin/diagnostics/records/module_counts.h"
#include "vin/diagnostics/text/dtypes.h"
#include "vin/diagnostics/text/printable.h"
#include "vin/diagnostics/text/type_names.h"
#include "vin/diagnostics/container/crc32.h"

namespace vin::diagnostics {
namespace {

constexpr std::uint64_t kMaxJsonBytes = std::uint64_t{64} << 20;
constexpr std::uint64_t kMaxPickleBytes = std::uint64_t{256} << 20;
constexpr std::size_t kMaxLegacyDepth = 2000;
// model.json's nesting: two levels per module (its submodules' list and the module), and a few
// for a module's own fields
constexpr std::size_t kMaxJsonDepth = 2 * kMaxLegacyDepth + 64;

// What the archive says that this reader cannot take: the caller adds the file's name.
struct MalformedLegacy {
  std::string what;
};

// caffe2.TensorProto.DataType, by the name protobuf's JSON printer writes or by number, to the
// dtype LibTorch 1.2 made of it (caffe2::DataTypeToTypeMeta); quantized tensors (isQuantized)
// take the matching qint type, as its toQIntType did
const Dtype& data_type(const Json& value, bool quantized) {
  static const std::pair<const char*, const char*> kTypes[] = {
      {"FLOAT", "float32"},   {"INT32", "int32"},   {"BYTE", "uint8"},  {"BOOL", "bool"},
      {"UINT8", "uint8"},     {"INT8", "int8"},     {"INT16", "int16"}, {"INT64", "int64"},
      {"FLOAT16", "float16"}, {"DOUBLE", "float64"}};
  static const int kNumbers[] = {1, 2, 3, 5, 6, 7, 9, 10, 12, 13};
  std::optional<std::string> name;
  for (std::size_t i = 0; i < std::size(kTypes); ++i)
    if ((value.is_string() && value.get<std::string>() == kTypes[i].first) ||
        (value.is_number_integer() && value.get<std::int64_t>() == kNumbers[i]))
      name = kTypes[i].second;
  if (!name)
    throw MalformedLegacy{"a tensor of data type " + printable(dump_line(value)) +
                    ", which no PyTorch module holds"};
  if (quantized) {
    if (*name == "uint8")
      name = "quint8";
    else if (*name == "int8")
      name = "qint8";
    else if (*name == "int32")
      name = "qint32";
    else
      throw MalformedLegacy{"a quantized tensor of data type " + *name};
  }
  return *dtype_named(*name);
}

// protobuf's JSON writes int64 fields as strings ("3"), older writers as numbers
std::int64_t integer_value(const Json& value, const char* key) {
  if (value.is_number_integer()) return value.get<std::int64_t>();
  if (value.is_string()) {
    const std::string& text = value.get_ref<const std::string&>();
    std::size_t used = 0;
    long long parsed = 0;
    try {
      parsed = std::stoll(text, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used == text.size() && used > 0) return parsed;
  }
  throw MalformedLegacy{std::string("the field ") + key + " is not an integer"};
}

std::int64_t integer(const Json& object, const char* key, std::int64_t absent = 0) {
  const auto it = object.find(key);
  return it == object.end() ? absent : integer_value(*it, key);
}

const Json& member(const Json& object, const char* key, Json::value_t type) {
  static const Json kEmptyArray = Json::array();
  static const Json kEmptyObject = Json::object();
  static const Json kEmptyString = "";
  const auto it = object.find(key);
  if (it == object.end()) {
    // protobuf's JSON leaves out empty and default fields
    if (type == Json::value_t::array) return kEmptyArray;
    if (type == Json::value_t::object) return kEmptyObject;
    if (type == Json::value_t::string) return kEmptyString;
  }
  if (it == object.end() || it->type() != type)
    throw MalformedLegacy{std::string("the field ") + key + " is missing or of the wrong type"};
  return *it;
}

bool flag(const Json& object, const char* key) {
  const auto it = object.find(key);
  if (it == object.end()) return false;
  if (!it->is_boolean()) throw MalformedLegacy{std::string("the field ") + key + " is not a boolean"};
  return it->get<bool>();
}

// One entry of model.json's tensor table, as LibTorch 1.2 registered it.
struct LegacyTensor {
  TensorMetadata metadata;  // name and kind are set per registration
};

class LegacyReader {
 public:
  LegacyReader(const ZipArchive& zip, std::string prefix, const InspectDetails& details)
      : zip_(zip), prefix_(std::move(prefix)), details_(details) {}

  ModelMetadata run() {
    const Json model = parse_model_json();
    if (!model.is_object()) throw MalformedLegacy{"model.json does not hold a ModelDef object"};
    for (const Json& tensor : member(model, "tensors", Json::value_t::array))
      tensors_.push_back(tensor_entry(tensor));
    const Json& root = member(model, "mainModule", Json::value_t::object);
    const std::string root_name = member(root, "name", Json::value_t::string);
    // depth first, pre-order, submodules in the order model.json lists them, as the 1.2 loader
    // registered them (named_modules' order)
    struct Pending {
      const Json* module;
      std::string path;
      std::string qualified;
      std::size_t depth;
    };
    std::vector<Pending> pending{{&root, "", "__torch__" + atoms(root_name), 0}};
    while (!pending.empty()) {
      Pending next = std::move(pending.back());
      pending.pop_back();
      if (next.depth > kMaxLegacyDepth)
        throw MalformedLegacy{"a module tree deeper than " + std::to_string(kMaxLegacyDepth) + " levels"};
      visit(*next.module, next.path, next.qualified);
      const Json& subs = member(*next.module, "submodules", Json::value_t::array);
      std::unordered_set<std::string> sibling_names;
      for (const Json& sub : subs) {
        if (!sub.is_object()) throw MalformedLegacy{"a submodule that is not a ModuleDef object"};
        const std::string name = member(sub, "name", Json::value_t::string);
        if (std::string why = unfit_submodule_name(next.path, name); !why.empty())
          throw MalformedLegacy{std::move(why)};
        if (!sibling_names.insert(name).second)
          throw MalformedLegacy{"two submodules of '" + (next.path.empty() ? kRootPath : next.path) +
                          "' are named '" + name + "'"};
      }
      for (auto it = subs.rbegin(); it != subs.rend(); ++it) {
        const std::string name = member(*it, "name", Json::value_t::string);
        // each path and type name holds its parent's: bounded, or a deep tree of long names
        // costs memory quadratic in its depth
        name_bytes_ += next.path.size() + next.qualified.size() + 2 * name.size() + 3;
        if (name_bytes_ > kMaxModulePathBytes) throw MalformedLegacy{kModulePathsTooLongMessage};
        pending.push_back({&*it, next.path.empty() ? name : next.path + "." + name,
                           next.qualified + atoms(name), next.depth + 1});
      }
    }
    ModelDetails model_details;
    if (details_.tensors) counts_.put_bytes(model_details);
    if (details_.signature) model_details.methods = signatures(root);
    model_details.stopped_by = budget_.stopped_by();
    return ModelMetadata(python_type_name("__torch__" + atoms(root_name)), counts_.total(),
                         counts_.trainable(), std::move(modules_), std::move(model_details));
  }

 private:
  // ".a.b" for the name "a.b": LibTorch 1.2 made each dotted part of a ModuleDef's name one atom
  // of the class's qualified name, an atom of digits only prefixed with "_" (a ModuleList's "0")
  static std::string atoms(const std::string& name) {
    std::string out;
    std::size_t start = 0;
    while (start <= name.size()) {
      std::size_t end = name.find('.', start);
      if (end == std::string::npos) end = name.size();
      const std::string atom = name.substr(start, end - start);
      const bool digits =
          !atom.empty() && atom.find_first_not_of("0123456789") == std::string::npos;
      out += "." + (digits ? "_" + atom : atom);
      start = end + 1;
    }
    return out;
  }

  Json parse_model_json() {
    const auto text = zip_.read(prefix_ + "model.json", kMaxJsonBytes);
    if (!text) throw MalformedLegacy{"model.json is missing"};
    budget_.read(text->size());
    // bounded while it parses: the walk below copies values, which recurses
    try {
      return parse_bounded_json(*text, kMaxJsonDepth);
    } catch (const JsonTooDeep&) {
      throw MalformedLegacy{"model.json nests values more than " + std::to_string(kMaxJsonDepth) +
                      " levels deep"};
    } catch (const Json::exception&) {
      throw MalformedLegacy{"model.json is not valid JSON"};
    }
  }

  LegacyTensor tensor_entry(const Json& tensor) {
    if (!tensor.is_object()) throw MalformedLegacy{"a tensor entry that is not a TensorDef object"};
    LegacyTensor entry;
    TensorMetadata& t = entry.metadata;
    const Json type = tensor.value("dataType", Json("FLOAT"));  // a default protobuf leaves out
    const Dtype& dtype = data_type(type, flag(tensor, "isQuantized"));
    t.dtype = dtype.python_name();
    std::int64_t numel = 1;
    for (const Json& dim : member(tensor, "dims", Json::value_t::array)) {
      const std::int64_t d = integer_value(dim, "dims");
      if (d < 0 || (d > 0 && numel > std::numeric_limits<std::int64_t>::max() / 16 / d))
        throw MalformedLegacy{"a tensor with a dimension out of range"};
      t.shape.push_back(d);
      numel *= d;
    }
    t.numel = numel;
    t.nbytes = numel * dtype.element_size;
    t.requires_grad = flag(tensor, "requiresGrad");
    t.device = member(tensor, "device", Json::value_t::string);
    if (t.device->empty()) throw MalformedLegacy{"a tensor without a device"};
    const Json& data = member(tensor, "data", Json::value_t::object);
    const std::string key = member(data, "key", Json::value_t::string);
    const auto index = zip_.find(prefix_ + key);
    if (!index) throw MalformedLegacy{"a tensor whose record " + printable(key) + " is missing"};
    t.storage_crc32 = crc32_text(zip_.entries()[*index].crc);
    if (details_.tensors) t.data_crc32 = data_crc32(tensor, dtype, t, *index);
    return entry;
  }

  // the CRC-32 of the elements the TensorDef places in its record (offset and strides)
  std::string data_crc32(const Json& tensor, const Dtype& dtype, const TensorMetadata& t,
                         std::size_t record) {
    SavedTensor s;
    s.dtype = &dtype;
    s.shape = t.shape;
    s.numel = t.numel;
    s.offset = integer(tensor, "offset");
    if (const auto it = tensor.find("strides"); it != tensor.end() && it->is_array()) {
      for (const Json& stride : *it) s.strides.push_back(integer_value(stride, "strides"));
    } else {
      s.strides = contiguous_strides(s.shape);
    }
    const auto reached = bytes_reached(s);
    if (!reached) throw MalformedLegacy{"a tensor whose offset and strides are out of range"};
    if (*reached > zip_.entries()[record].size)
      throw MalformedLegacy{"a tensor that reaches past its record's " +
                            std::to_string(zip_.entries()[record].size) + " bytes"};
    InputFilePtr inflated;
    return crc32_text(elements_crc32(s, member_bytes(zip_, record, false, inflated)));
  }

  const LegacyTensor& tensor_at(std::int64_t id) const {
    if (id < 0 || static_cast<std::size_t>(id) >= tensors_.size())
      throw MalformedLegacy{"a parameter whose tensor id " + std::to_string(id) + " is not in the table"};
    return tensors_[static_cast<std::size_t>(id)];
  }

  // attributes.pkl's values by attribute id: a tuple (protoVersion 3 and later) or a list (2)
  PickleRef attribute_at(std::int64_t id) {
    if (!attributes_) {
      const auto bytes = zip_.read(prefix_ + "attributes.pkl", kMaxPickleBytes);
      if (!bytes) throw MalformedLegacy{"an attribute with a value, and no attributes.pkl"};
      attribute_bytes_ = *bytes;
      budget_.read(attribute_bytes_.size());
      if (const auto problem = pickle_problem(attribute_bytes_))
        throw MalformedLegacy{"the record attributes.pkl cannot be read safely: " + *problem};
      try {
        attributes_ = read_pickle(attribute_bytes_);
      } catch (const UnsupportedPickle& e) {
        throw MalformedLegacy{std::string("the record attributes.pkl cannot be read: ") + e.what()};
      }
    }
    const PickleRef root = attributes_->root;
    if ((root->kind != PickleValue::Kind::tuple && root->kind != PickleValue::Kind::list) ||
        id < 0 || static_cast<std::size_t>(id) >= root->items.size())
      throw MalformedLegacy{"attributes.pkl: " +
                            attributes_->foreign.before("an attribute whose id " +
                                                        std::to_string(id) + " is not in it")};
    return root->items[static_cast<std::size_t>(id)];
  }

  // PyTorch 1.1 and 1.2 pickled a typed list as an object of `__main__.IntList` (DoubleList,
  // BoolList, TensorList) built from the plain list, which their unpickler read back as that list
  static PickleRef typed_list_items(PickleRef value) {
    static const std::unordered_set<std::string> kTypedLists = {
        "__main__.IntList", "__main__.DoubleList", "__main__.BoolList", "__main__.TensorList"};
    if (value->kind == PickleValue::Kind::object && kTypedLists.count(value->text) &&
        value->state && value->state->kind == PickleValue::Kind::list)
      return value->state;
    return value;
  }

  void visit(const Json& module, const std::string& path, const std::string& qualified) {
    DirectCounts direct;
    std::vector<TensorMetadata> parameter_list, buffer_list;
    std::unordered_set<std::string> registered;
    for (const Json& p : member(module, "parameters", Json::value_t::array)) {
      if (!p.is_object()) throw MalformedLegacy{"a parameter that is not a ParameterDef object"};
      const std::string name = member(p, "name", Json::value_t::string);
      const std::int64_t id = integer(p, "tensorId");
      const bool is_buffer = flag(p, "isBuffer");
      const TensorMetadata& t = tensor_at(id).metadata;
      registered.insert(name);
      // admitted before the copy: one table entry may be named by every module
      if (details_.tensors &&
          budget_.admit_tensor(t.shape.size(), name.size() + t.dtype.size() + t.device->size())) {
        TensorMetadata named = t;
        named.name = name;
        named.kind = is_buffer ? "buffer" : "parameter";
        (is_buffer ? buffer_list : parameter_list).push_back(std::move(named));
      }
      if (is_buffer)
        counts_.buffer(direct, id, t.numel, t.nbytes);
      else
        counts_.parameter(direct, id, t.numel, t.requires_grad.value_or(false), t.nbytes);
    }
    bool training = true;  // LibTorch's is_training() of a module without the attribute
    JsonObjectBuilder attributes;
    for (const Json& a : member(module, "attributes", Json::value_t::array)) {
      if (!a.is_object()) throw MalformedLegacy{"an attribute that is not an AttributeDef object"};
      const std::string name = member(a, "name", Json::value_t::string);
      const std::string type = member(a, "type", Json::value_t::string);
      if (!registered.insert(name).second) continue;  // a buffer registered above, as 1.2 did
      const std::int64_t id = integer(a, "id", -1);
      if (name == "training") {
        const PickleRef value = id >= 0 ? attribute_at(id) : nullptr;
        training = value && value->kind == PickleValue::Kind::boolean && value->boolean;
      } else if (details_.attributes && !is_bookkeeping_name(name) && type != "Tensor") {
        attributes.set(name, id >= 0
                                 ? admitted_attribute(typed_list_items(attribute_at(id)), budget_)
                                 : budget_.admit(Json()));
      }
    }
    ModuleDetails module_details;
    if (details_.tensors) {
      parameter_list.insert(parameter_list.end(), std::make_move_iterator(buffer_list.begin()),
                            std::make_move_iterator(buffer_list.end()));
      module_details.tensors = std::move(parameter_list);
    }
    if (details_.attributes) module_details.attributes = attributes.take();
    modules_.emplace_back(path.empty() ? kRootPath : path, python_type_name(qualified),
                          direct.parameters, direct.trainable, direct.buffers, training,
                          std::move(module_details));
  }

  // The root's methods: its code record holds them as top-level `def`s (bodies at two spaces);
  // read as the body of a class, they are what class_source reads in today's archives.
  std::vector<MethodSignature> signatures(const Json& root) {
    const Json& arena = member(root, "torchscriptArena", Json::value_t::object);
    const std::string key = member(arena, "key", Json::value_t::string);
    if (key.empty()) return {};
    const auto code = zip_.read(prefix_ + key, kCodeLimits.max_bytes);
    if (!code) throw MalformedLegacy{"the module's code record " + printable(key) + " is missing"};
    source_ = "class Legacy(Module):\n";
    std::size_t start = 0;
    while (start < code->size()) {
      std::size_t end = code->find('\n', start);
      if (end == std::string::npos) end = code->size();
      const std::string_view line(code->data() + start, end - start);
      if (line.rfind("op_version_set", 0) != 0 && !line.empty()) {
        source_ += "  ";
        // today's printer annotates self with its class; 1.0 to 1.2 left it bare
        const std::size_t self = line.rfind("def ", 0) == 0 ? line.find("(self") : line.npos;
        if (self != line.npos &&
            (line.size() == self + 5 || line[self + 5] == ',' || line[self + 5] == ')')) {
          source_.append(line.data(), self + 5);
          source_ += ": __torch__.Legacy";
          source_.append(line.data() + self + 5, line.size() - self - 5);
        } else {
          source_.append(line.data(), line.size());
        }
        source_ += '\n';
      }
      start = end + 1;
    }
    ClassSources classes;
    const ArchiveConstant no_constants = [](std::size_t index) -> Json {
      throw UnsupportedPickle("CONSTANTS.c" + std::to_string(index) +
                              " (a tensor of the constant table) as a default");
    };
    std::vector<MethodSignature> methods;
    try {
      read_class_sources("code/__torch__.py", source_, classes);
      const ClassSource& cls = classes.at("__torch__.Legacy");
      if (const MethodSource* forward = cls.method("forward"))
        methods.push_back(parse_method_signature(*forward, no_constants));
      for (const MethodSource& method : cls.methods)
        if (method.name != "forward" && !is_bookkeeping_name(method.name))
          methods.push_back(parse_method_signature(method, no_constants));
    } catch (const UnsupportedPickle& e) {
      throw MalformedLegacy{"the methods in " + printable(key) + " cannot be read: " + e.what()};
    }
    return methods;
  }

  const ZipArchive& zip_;
  const std::string prefix_;
  const InspectDetails details_;
  DetailBudget budget_;  // the attribute values and tensors printed, bounded by what was read
  std::vector<LegacyTensor> tensors_;
  std::string attribute_bytes_;
  std::optional<PickleDocument> attributes_;
  std::string source_;
  std::size_t name_bytes_ = 0;
  std::vector<ModuleMetadata> modules_;
  ModelCounts<std::int64_t> counts_;  // by tensor id
};

}  // namespace

ModelMetadata read_legacy_archive_metadata(const ZipArchive& zip, const std::string& prefix,
                                           const InspectDetails& details) {
  try {
    return LegacyReader(zip, prefix, details).run();
  } catch (const MalformedLegacy& e) {
    throw Error(zip.path() + ": a TorchScript archive of PyTorch 1.0 to 1.2 (model.json) that " +
                "cannot be read: " + e.what);
  } catch (const CountOverflow&) {
    throw Error(zip.path() + ": a TorchScript archive of PyTorch 1.0 to 1.2 (model.json) that " +
                "cannot be read: " + kCountOverflowMessage);
  }
}

}  // namespace vin::diagnostics
