#include "vin/diagnostics/torchscript/archive_structure.h"
#include "vin/diagnostics/records/detail_budget.h"

#include <functional>
#include <unordered_map>
#include <unordered_set>

#include "vin/diagnostics/torchscript/archive_layout.h"
#include "vin/diagnostics/torchscript/class_source.h"
#include "vin/diagnostics/torchscript/module_details.h"
#include "vin/diagnostics/torchscript/module_state.h"
#include "vin/diagnostics/pickle/pickle_reader.h"
#include "vin/diagnostics/pickle/pickle_safety.h"
#include "vin/diagnostics/pickle/saved_tensor.h"
#include "vin/diagnostics/torch_save/torch_save_file.h"
#include "vin/diagnostics/torchscript/torchscript_literal.h"
#include "vin/diagnostics/records/error.h"
#include "vin/diagnostics/records/module_counts.h"
#include "vin/diagnostics/text/printable.h"
#include "vin/diagnostics/text/type_names.h"
#include "vin/diagnostics/container/crc32.h"

namespace vin::diagnostics {
namespace {

constexpr std::size_t kMaxRecordBytes = std::size_t{1} << 30;
constexpr std::size_t kMaxDepth = 2000;  // deeper module trees go to LibTorch

using Kind = PickleValue::Kind;

// module paths this reader refuses outright (too long, or one module's path another's)
struct UnfitPaths {
  std::string why;
};

// The CRC-32 of a listed tensor's elements (TensorMetadata's data_crc32), given its pickled
// value and its path from the root, or nothing where no record holds its storage.
using TensorDataCrc = std::function<std::optional<std::string>(PickleRef, const std::string&)>;

// Walks the module objects in named_modules order, as inspect_model walks a loaded module.
class StructureWalker {
 public:
  StructureWalker(const ClassSources& classes, const InspectDetails& details,
                  const StorageChecksums& checksums, TensorDataCrc data_crc,
                  ArchiveConstant constant, std::uint64_t bytes_read)
      : classes_(classes),
        details_(details),
        checksums_(checksums),
        data_crc_(std::move(data_crc)),
        constant_(std::move(constant)),
        budget_(bytes_read) {}

  ModelMetadata run(PickleRef root) {
    const ClassSource* root_class = module_class(root);
    if (!root_class) throw UnsupportedPickle("the root is not a module object");
    // depth first, pre-order, children in attribute order: an explicit stack, so that a deep
    // module tree costs heap, not call stack
    std::vector<Pending> pending{{root, "", 0}};
    while (!pending.empty()) {
      Pending next = std::move(pending.back());
      pending.pop_back();
      visit(next, pending);
    }
    ModelDetails model_details;
    if (details_.tensors) counts_.put_bytes(model_details);
    if (details_.signature) model_details.methods = signatures(*root_class);
    model_details.stopped_by = budget_.stopped_by();
    return ModelMetadata(python_type_name(root->text), counts_.total(), counts_.trainable(),
                         std::move(modules_), std::move(model_details));
  }

 private:
  const ClassSource* module_class(PickleRef value) const {
    if (value->kind != Kind::object) return nullptr;
    const auto it = classes_.find(value->text);
    if (it == classes_.end()) {
      // a TorchScript class without code is a custom C++ class (torch.classes.*): never a module
      if (value->text.rfind("__torch__.torch.classes.", 0) == 0) return nullptr;
      throw UnsupportedPickle("no class definition for " + value->text + " under code/");
    }
    return it->second.is_module ? &it->second : nullptr;
  }

  struct Pending {
    PickleRef module;
    std::string path;
    std::size_t depth;
  };

  // records `next` and queues its children (first child on top)
  void visit(const Pending& next, std::vector<Pending>& pending) {
    const PickleRef module = next.module;
    const std::string& path = next.path;
    const std::size_t depth = next.depth;
    if (!seen_modules_.insert(module).second) return;
    if (depth > kMaxDepth)
      throw UnsupportedPickle("a module tree deeper than " + std::to_string(kMaxDepth) + " levels");
    const ClassSource& cls = *module_class(module);
    DirectCounts direct;
    bool training = false;
    std::vector<std::pair<std::string_view, PickleRef>> children;
    std::unordered_set<std::string_view> names;
    std::vector<TensorMetadata> parameter_list, buffer_list;
    JsonObjectBuilder attributes;  // linear in the attributes, however many
    const auto attributes_of = module_attributes(module, cls, classes_);
    for (const auto& [name, value] : attributes_of) {
      if (!names.insert(name).second)
        throw UnsupportedPickle("an attribute set twice: " + std::string(name));
      const std::string key(name);
      const bool is_parameter = cls.parameters.count(key) > 0;
      const bool is_buffer = !is_parameter && cls.buffers.count(key) > 0;
      if (is_parameter || is_buffer) {
        if (value->kind == Kind::none) continue;  // a slot registered as None
        if (value->kind != Kind::tensor)
          throw UnsupportedPickle(module->text + "." + key + " is not a tensor this reader knows");
        const std::int64_t n = value->numel;
        std::int64_t nbytes = 0;
        if (details_.tensors) {
          nbytes = tensor_nbytes(value);
          if (auto t = listed_tensor(key, is_buffer ? "buffer" : "parameter", value, checksums_,
                                     budget_)) {
            t->data_crc32 = data_crc_(value, path.empty() ? key : path + "." + key);
            (is_buffer ? buffer_list : parameter_list).push_back(std::move(*t));
          }
        }
        if (is_buffer)
          counts_.buffer(direct, value, n, nbytes);
        else
          counts_.parameter(direct, value, n, value->requires_grad, nbytes);
      } else if (name == "training") {
        training = value->kind == Kind::boolean && value->boolean;
      } else if (module_class(value)) {
        if (std::string why = unfit_submodule_name(path, name); !why.empty())
          throw UnfitPaths{std::move(why)};
        children.emplace_back(name, value);
      } else if (details_.attributes && is_described_attribute(name, value)) {
        attributes.set(key, admitted_attribute(value, budget_));
      }
    }
    ModuleDetails module_details;
    if (details_.tensors) {
      parameter_list.insert(parameter_list.end(), std::make_move_iterator(buffer_list.begin()),
                            std::make_move_iterator(buffer_list.end()));
      module_details.tensors = std::move(parameter_list);
    }
    if (details_.attributes) {
      require_state_for_every_attribute(module, cls, names);
      for (const auto& [name, literal] : cls.constants)
        if (!is_bookkeeping_name(name))
          attributes.set(name, budget_.admit(parse_torchscript_literal(literal, constant_)));
      module_details.attributes = attributes.take();
    }
    modules_.emplace_back(path.empty() ? kRootPath : path, python_type_name(module->text),
                          direct.parameters, direct.trainable, direct.buffers, training,
                          std::move(module_details));
    for (auto it = children.rbegin(); it != children.rend(); ++it) {
      path_bytes_ += path.size() + 1 + it->first.size();
      if (path_bytes_ > kMaxModulePathBytes) throw UnfitPaths{kModulePathsTooLongMessage};
      pending.push_back(
          {it->second, path.empty() ? std::string(it->first) : path + "." + std::string(it->first),
           depth + 1});
    }
  }

  // an attribute that --attributes lists: not a tensor, not TorchScript's bookkeeping (modules,
  // parameter and buffer slots and training are taken apart before)
  static bool is_described_attribute(std::string_view name, PickleRef value) {
    return !is_bookkeeping_name(name) && value->kind != Kind::tensor;
  }

  // A module restored by `__setstate__` holds what its source assigns from the state; an
  // attribute the class declares and the state does not hold was computed by code this reader
  // does not run, so its value is unknown here.
  void require_state_for_every_attribute(PickleRef module, const ClassSource& cls,
                                         const std::unordered_set<std::string_view>& set) const {
    for (const auto& [name, type] : cls.attributes) {
      if (is_bookkeeping_name(name) || set.count(name) || cls.parameters.count(name) ||
          cls.buffers.count(name))
        continue;
      const auto it = classes_.find(type);
      if (it != classes_.end() && it->second.is_module) continue;
      throw UnsupportedPickle(module->text + "." + name + " is set by code, not from its state");
    }
  }

  // forward first, then the other public methods in the order the code defines them
  std::vector<MethodSignature> signatures(const ClassSource& root) const {
    std::vector<MethodSignature> methods;
    if (const MethodSource* forward = root.method("forward"))
      methods.push_back(parse_method_signature(*forward, constant_));
    for (const MethodSource& method : root.methods)
      if (method.name != "forward" && !is_bookkeeping_name(method.name) &&
          !root.hooks.count(method.name))
        methods.push_back(parse_method_signature(method, constant_));
    return methods;
  }

  const ClassSources& classes_;
  const InspectDetails details_;
  const StorageChecksums& checksums_;
  const TensorDataCrc data_crc_;
  const ArchiveConstant constant_;
  DetailBudget budget_;  // the attribute values and tensors printed, bounded by what was read
  std::vector<ModuleMetadata> modules_;
  std::unordered_set<const PickleValue*> seen_modules_;
  ModelCounts<const PickleValue*> counts_;
  std::size_t path_bytes_ = 0;
};

// The items of constants.pkl as record values, read the first time a literal refers to one.
class ArchiveConstants {
 public:
  ArchiveConstants(const std::string& path, const std::string* pickle)
      : path_(path), pickle_(pickle) {}

  Json operator()(std::size_t index) {
    if (!document_) {
      if (!pickle_) throw UnsupportedPickle("CONSTANTS without a constants.pkl");
      if (const auto problem = pickle_problem(*pickle_))
        throw Error(path_ + ": the record constants.pkl cannot be read safely: " + *problem);
      document_ = read_pickle(*pickle_);
    }
    const PickleRef root = document_->root;
    if (root->kind != Kind::tuple || index >= root->items.size())
      throw UnsupportedPickle("constants.pkl: " + document_->foreign.before(
                                                     "CONSTANTS.c" + std::to_string(index) +
                                                     " is not in it"));
    return attribute_value(root->items[index]);
  }

 private:
  const std::string& path_;
  const std::string* pickle_;
  std::optional<PickleDocument> document_;
};

}  // namespace

std::optional<ModelMetadata> read_archive_metadata(const ArchiveLayout& layout,
                                                   const InspectDetails& details,
                                                   std::string* why_not) {
  const std::string& path = layout.path();
  StorageChecksums checksums;
  const bool literals = details.attributes || details.signature;
  const auto records = read_archive_records(
      layout,
      [&](std::string_view name) {
        return name == "data.pkl" || is_code_record(name) || (literals && name == "constants.pkl");
      },
      kMaxRecordBytes, kMaxRecordBytes + kCodeLimits.max_bytes,
      details.tensors ? &checksums : nullptr);
  // the globals data.pkl imports that the reader does not rebuild: named before whatever
  // stops the walk later, which would hide them (posix.system, then "not a module object")
  ForeignGlobals foreign;
  try {
    ClassSources classes;
    const std::string* data = nullptr;
    const std::string* constants = nullptr;
    for (const auto& [name, bytes] : records) {
      if (name == "data.pkl")
        data = &bytes;
      else if (name == "constants.pkl")
        constants = &bytes;
      else
        read_class_sources(name, bytes, classes);
    }
    if (!data) throw UnsupportedPickle("no data.pkl");
    if (const auto problem = pickle_problem(*data))
      throw Error(path + ": the record data.pkl cannot be read safely: " + *problem);
    const PickleDocument document = [&] {
      try {
        return read_pickle(*data);
      } catch (const UnsupportedPickle& e) {
        throw UnsupportedPickle("data.pkl: " + std::string(e.what()));
      }
    }();
    foreign = document.foreign;
    ArchiveConstants constant(path, constants);
    std::uint64_t bytes_read = 0;
    for (const auto& [name, bytes] : records) bytes_read += bytes.size();
    // with --tensors, each listed tensor's elements read for their CRC where they lie
    const bool big_endian = big_endian_storages(*layout.zip, layout.record_prefix, path);
    std::unordered_map<std::string, InputFilePtr> inflated;
    const auto data_crc = [&](PickleRef tensor,
                              const std::string& name) -> std::optional<std::string> {
      const std::string where = "the tensor " + printable(name, 200);
      const SavedTensor t = saved_tensor(tensor, path + ": " + where);
      if (!layout.zip->find(layout.record_prefix + "data/" + t.storage_key))
        return std::nullopt;  // as its storage_crc32: no record holds it
      return crc32_text(elements_crc32(
          t, storage_record(*layout.zip, layout.record_prefix, t, big_endian,
                            inflated[t.storage_key], path, where)));
    };
    return StructureWalker(classes, details, checksums, data_crc, std::ref(constant), bytes_read)
        .run(document.root);
  } catch (const UnsupportedPickle& e) {
    if (why_not) *why_not = foreign.empty() ? e.what() : "data.pkl: " + foreign.before(e.what());
    return std::nullopt;
  } catch (const CountOverflow&) {
    throw Error(path + ": " + kCountOverflowMessage);
  } catch (const UnfitPaths& e) {
    throw Error(path + ": " + e.why);
  }
}

}  // namespace vin::diagnostics
