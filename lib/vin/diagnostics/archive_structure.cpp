#include "vin/diagnostics/archive_structure.h"

#include <unordered_map>
#include <unordered_set>

#include "vin/diagnostics/archive_layout.h"
#include "vin/diagnostics/pickle_reader.h"
#include "vin/diagnostics/type_names.h"

namespace vin::diagnostics {
namespace {

constexpr std::size_t kMaxRecordBytes = std::size_t{1} << 30;
constexpr std::size_t kMaxDepth = 2000;  // deeper module trees go to LibTorch

using Kind = PickleValue::Kind;

// What a class header under code/ says about a TorchScript class.
struct ClassHeader {
  bool is_module = false;
  std::unordered_set<std::string> parameters;
  std::unordered_set<std::string> buffers;
};

// The quoted names of `  __parameters__ = ["weight", "bias", ]`.
std::unordered_set<std::string> quoted_names(std::string_view line) {
  // TorchScript prints the list on one line; anything else is not a header this reader knows
  if (line.find(']') == std::string_view::npos)
    throw UnsupportedPickle("a class header list that does not end on its line");
  std::unordered_set<std::string> names;
  std::size_t pos = 0;
  while ((pos = line.find('"', pos)) != std::string_view::npos) {
    const std::size_t end = line.find('"', pos + 1);
    if (end == std::string_view::npos) throw UnsupportedPickle("unterminated name in a header");
    const std::string_view name = line.substr(pos + 1, end - pos - 1);
    if (name.find('\\') != std::string_view::npos)
      throw UnsupportedPickle("escaped attribute name in a class header");
    names.emplace(name);
    pos = end + 1;
  }
  return names;
}

// Reads the class headers of one code/ file: `record` is e.g. "code/__torch__/torch/nn/conv.py",
// whose classes are named `__torch__.torch.nn.conv.<Name>`.
void read_class_headers(const std::string& record, std::string_view source,
                        std::unordered_map<std::string, ClassHeader>& classes) {
  std::string module = record.substr(5, record.size() - 5 - 3);  // drop "code/" and ".py"
  for (char& c : module)
    if (c == '/') c = '.';
  ClassHeader* current = nullptr;
  std::size_t pos = 0;
  while (pos < source.size()) {
    std::size_t end = source.find('\n', pos);
    if (end == std::string_view::npos) end = source.size();
    const std::string_view line = source.substr(pos, end - pos);
    pos = end + 1;
    if (line.rfind("class ", 0) == 0) {
      const std::size_t paren = line.find('(');
      const std::size_t colon = line.find(':');
      const std::size_t name_end = std::min(paren, colon);
      if (name_end == std::string_view::npos) throw UnsupportedPickle("unreadable class header");
      const std::string name = module + "." + std::string(line.substr(6, name_end - 6));
      current = &classes[name];
      current->is_module =
          paren != std::string_view::npos && line.substr(paren).rfind("(Module):", 0) == 0;
    } else if (!line.empty() && line[0] != ' ') {
      current = nullptr;  // a top-level statement ends the class
    } else if (current && line.rfind("  __parameters__ = [", 0) == 0) {
      current->parameters = quoted_names(line.substr(19));
    } else if (current && line.rfind("  __buffers__ = [", 0) == 0) {
      current->buffers = quoted_names(line.substr(16));
    }
  }
}

// Walks the module objects in named_modules order, as inspect_model walks a loaded module.
class StructureWalker {
 public:
  explicit StructureWalker(const std::unordered_map<std::string, ClassHeader>& classes)
      : classes_(classes) {}

  ModelMetadata run(PickleRef root) {
    if (!module_header(root)) throw UnsupportedPickle("the root is not a module object");
    visit(root, "", 0);
    return ModelMetadata(python_type_name(root->text), total_, trainable_, std::move(modules_));
  }

 private:
  const ClassHeader* module_header(PickleRef value) const {
    if (value->kind != Kind::object) return nullptr;
    const auto it = classes_.find(value->text);
    if (it == classes_.end()) {
      // a TorchScript class without code is a custom C++ class (torch.classes.*): never a module
      if (value->text.rfind("__torch__.torch.classes.", 0) == 0) return nullptr;
      throw UnsupportedPickle("no class header for " + value->text);
    }
    return it->second.is_module ? &it->second : nullptr;
  }

  void visit(PickleRef module, const std::string& path, std::size_t depth) {
    if (!seen_modules_.insert(module).second) return;
    if (depth > kMaxDepth) throw UnsupportedPickle("module tree too deep");
    const ClassHeader& header = *module_header(module);
    const PickleRef state = module->state;
    if (!state || state->kind != Kind::dict)
      throw UnsupportedPickle(module->text + " has a state that is not a dict (__setstate__)");
    const auto& items = state->items;
    std::int64_t direct = 0, direct_trainable = 0, buffers = 0;
    bool training = false;
    std::vector<std::pair<std::string, PickleRef>> children;
    std::unordered_set<std::string_view> names;
    for (std::size_t i = 0; i + 1 < items.size(); i += 2) {
      const PickleRef key = items[i];
      PickleRef value = items[i + 1];
      if (key->kind != Kind::string) throw UnsupportedPickle("a module attribute without a name");
      const std::string& name = key->text;
      if (!names.insert(name).second) throw UnsupportedPickle("an attribute set twice: " + name);
      const bool is_parameter = header.parameters.count(name) > 0;
      const bool is_buffer = !is_parameter && header.buffers.count(name) > 0;
      if (is_parameter || is_buffer) {
        if (value->kind == Kind::none) continue;  // a slot registered as None
        if (value->kind != Kind::tensor)
          throw UnsupportedPickle(module->text + "." + name + " is not a tensor this reader knows");
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
      } else if (module_header(value)) {
        children.emplace_back(name, value);
      }
    }
    modules_.emplace_back(path.empty() ? kRootPath : path, python_type_name(module->text), direct,
                          direct_trainable, buffers, training);
    for (const auto& [name, child] : children)
      visit(child, path.empty() ? name : path + "." + name, depth + 1);
  }

  // sums of element counts that LibTorch could never hold overflow int64: not an answer to give
  static void add(std::int64_t& sum, std::int64_t n) {
    if (__builtin_add_overflow(sum, n, &sum)) throw UnsupportedPickle("parameter counts overflow");
  }

  const std::unordered_map<std::string, ClassHeader>& classes_;
  std::vector<ModuleMetadata> modules_;
  std::unordered_set<const PickleValue*> seen_modules_;
  std::unordered_set<const PickleValue*> seen_parameters_;
  std::int64_t total_ = 0;
  std::int64_t trainable_ = 0;
};

}  // namespace

std::optional<ModelMetadata> read_model_structure(const std::string& path, std::string* why_not) {
  const ArchiveLayout layout = probe_torchscript_archive(path);
  const auto records = read_archive_records(
      path, layout,
      [](std::string_view name) { return name == "data.pkl" || is_code_record(name); },
      kMaxRecordBytes);
  try {
    std::unordered_map<std::string, ClassHeader> classes;
    const std::string* data = nullptr;
    for (const auto& [name, bytes] : records) {
      if (name == "data.pkl")
        data = &bytes;
      else
        read_class_headers(name, bytes, classes);
    }
    if (!data) throw UnsupportedPickle("no data.pkl");
    const PickleDocument document = read_pickle(*data);
    return StructureWalker(classes).run(document.root);
  } catch (const UnsupportedPickle& e) {
    if (why_not) *why_not = e.what();
    return std::nullopt;
  }
}

}  // namespace vin::diagnostics
