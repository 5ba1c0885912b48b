#include "vin/diagnostics/archive/archive_structure.h"

#include <unordered_map>
#include <unordered_set>

#include "vin/diagnostics/archive/archive_layout.h"
#include "vin/diagnostics/archive/class_source.h"
#include "vin/diagnostics/archive/module_state.h"
#include "vin/diagnostics/archive/pickle_reader.h"
#include "vin/diagnostics/archive/pickle_safety.h"
#include "vin/diagnostics/records/error.h"
#include "vin/diagnostics/text/type_names.h"

namespace vin::diagnostics {
namespace {

constexpr std::size_t kMaxRecordBytes = std::size_t{1} << 30;
constexpr std::size_t kMaxDepth = 2000;  // deeper module trees go to LibTorch

using Kind = PickleValue::Kind;

struct CountOverflow {};

// Walks the module objects in named_modules order, as inspect_model walks a loaded module.
class StructureWalker {
 public:
  explicit StructureWalker(const ClassSources& classes) : classes_(classes) {}

  ModelMetadata run(PickleRef root) {
    if (!module_class(root)) throw UnsupportedPickle("the root is not a module object");
    // depth first, pre-order, children in attribute order: an explicit stack, so that a deep
    // module tree costs heap, not call stack
    std::vector<Pending> pending{{root, "", 0}};
    while (!pending.empty()) {
      Pending next = std::move(pending.back());
      pending.pop_back();
      visit(next, pending);
    }
    return ModelMetadata(python_type_name(root->text), total_, trainable_, std::move(modules_));
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
    std::int64_t direct = 0, direct_trainable = 0, buffers = 0;
    bool training = false;
    std::vector<std::pair<std::string_view, PickleRef>> children;
    std::unordered_set<std::string_view> names;
    for (const auto& [name, value] : module_attributes(module, cls, classes_)) {
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
        if (is_buffer) {
          add(buffers, n);
          continue;
        }
        add(direct, n);
        if (value->requires_grad) add(direct_trainable, n);
        if (seen_parameters_.insert(value).second) {
          add(total_, n);
          if (value->requires_grad) add(trainable_, n);
        }
      } else if (name == "training") {
        training = value->kind == Kind::boolean && value->boolean;
      } else if (module_class(value)) {
        children.emplace_back(name, value);
      }
    }
    modules_.emplace_back(path.empty() ? kRootPath : path, python_type_name(module->text), direct,
                          direct_trainable, buffers, training);
    for (auto it = children.rbegin(); it != children.rend(); ++it)
      pending.push_back(
          {it->second, path.empty() ? std::string(it->first) : path + "." + std::string(it->first),
           depth + 1});
  }

  // sums of element counts that no model can hold overflow int64: not an answer to give
  static void add(std::int64_t& sum, std::int64_t n) {
    if (__builtin_add_overflow(sum, n, &sum)) throw CountOverflow();
  }

  const ClassSources& classes_;
  std::vector<ModuleMetadata> modules_;
  std::unordered_set<const PickleValue*> seen_modules_;
  std::unordered_set<const PickleValue*> seen_parameters_;
  std::int64_t total_ = 0;
  std::int64_t trainable_ = 0;
};

}  // namespace

std::optional<ModelMetadata> read_archive_metadata(const std::string& path, std::string* why_not) {
  const ArchiveLayout layout = probe_torchscript_archive(path);
  const auto records = read_archive_records(
      path, layout,
      [](std::string_view name) { return name == "data.pkl" || is_code_record(name); },
      kMaxRecordBytes, kMaxRecordBytes + kCodeLimits.max_bytes);
  try {
    ClassSources classes;
    const std::string* data = nullptr;
    for (const auto& [name, bytes] : records) {
      if (name == "data.pkl")
        data = &bytes;
      else
        read_class_sources(name, bytes, classes);
    }
    if (!data) throw UnsupportedPickle("no data.pkl");
    if (const auto problem = pickle_problem(*data))
      throw Error(path + ": the record data.pkl cannot be read safely: " + *problem);
    const PickleDocument document = read_pickle(*data);
    return StructureWalker(classes).run(document.root);
  } catch (const UnsupportedPickle& e) {
    if (why_not) *why_not = e.what();
    return std::nullopt;
  } catch (const CountOverflow&) {
    throw Error(path + ": " + kCountOverflowMessage);
  }
}

}  // namespace vin::diagnostics
