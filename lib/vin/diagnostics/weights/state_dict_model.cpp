#include "vin/diagnostics/weights/state_dict_model.h"

#include <algorithm>
#include <map>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "vin/diagnostics/records/module_counts.h"

namespace vin::diagnostics {
namespace {

std::vector<std::string_view> segments_of(std::string_view path) {
  std::vector<std::string_view> out;
  for (std::size_t at = 0;;) {
    const std::size_t dot = path.find('.', at);
    out.push_back(path.substr(at, dot == std::string_view::npos ? dot : dot - at));
    if (dot == std::string_view::npos) return out;
    at = dot + 1;
  }
}

bool is_number(std::string_view segment) {
  return !segment.empty() &&
         std::all_of(segment.begin(), segment.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// numbers by value (without converting: any length), then by their digits (`01` after `1`)
bool segment_before(std::string_view a, std::string_view b) {
  const bool na = is_number(a), nb = is_number(b);
  if (na != nb) return na;
  if (na) {
    const std::string_view ta = a.substr(std::min(a.find_first_not_of('0'), a.size()));
    const std::string_view tb = b.substr(std::min(b.find_first_not_of('0'), b.size()));
    if (ta.size() != tb.size()) return ta.size() < tb.size();
    if (ta != tb) return ta < tb;
  }
  return a < b;
}

}  // namespace

std::pair<std::string, std::string> module_and_name(const std::string& dict_key) {
  const std::size_t dot = dict_key.rfind('.');
  if (dot == std::string::npos) return {kRootPath, dict_key};
  std::string module = dict_key.substr(0, dot);
  for (const std::string_view segment : segments_of(module))
    if (segment.empty()) return {kRootPath, dict_key};
  return {std::move(module), dict_key.substr(dot + 1)};
}

bool module_path_before(const std::string& a, const std::string& b) {
  if (a == kRootPath || b == kRootPath) return a == kRootPath && b != kRootPath;
  const auto sa = segments_of(a), sb = segments_of(b);
  for (std::size_t i = 0; i < std::min(sa.size(), sb.size()); ++i) {
    if (segment_before(sa[i], sb[i])) return true;
    if (segment_before(sb[i], sa[i])) return false;
  }
  return sa.size() < sb.size();
}

namespace {

// The modules in the order of their first keys, depth first: `created` lists each module after
// its parent (add_module makes ancestors first), so a module's children are in the order the
// keys first named them, and a walk of that tree gives named_modules()'s order.
std::vector<std::string> first_key_order(const std::vector<std::string>& created) {
  std::unordered_map<std::string_view, std::size_t> index;
  index.reserve(created.size());
  for (std::size_t i = 0; i < created.size(); ++i) index.emplace(created[i], i);
  std::vector<std::vector<std::size_t>> children(created.size());
  for (std::size_t i = 1; i < created.size(); ++i) {  // created[0] is the root
    const std::string_view path = created[i];
    const std::size_t dot = path.rfind('.');
    const std::size_t parent = dot == std::string_view::npos ? 0 : index.at(path.substr(0, dot));
    children[parent].push_back(i);
  }
  std::vector<std::string> out;
  out.reserve(created.size());
  std::vector<std::size_t> stack = {0};  // iterative: a key of a million segments is deep
  while (!stack.empty()) {
    const std::size_t at = stack.back();
    stack.pop_back();
    out.push_back(created[at]);
    stack.insert(stack.end(), children[at].rbegin(), children[at].rend());
  }
  return out;
}

}  // namespace

ModelMetadata model_of_state_dict(const std::string& file, const std::vector<StateDictTensor>& tensors,
                                  WeightsFile weights, const InspectDetails& details,
                                  ModuleOrder order) {
  // every module a key names and its ancestors; each module's tensors, in the file's order
  struct Module {
    DirectCounts counts;
    std::vector<TensorMetadata> tensors;
  };
  std::unordered_map<std::string, Module> modules;
  std::vector<std::string> created = {kRootPath};  // each module after its parent
  modules[kRootPath];
  std::size_t path_bytes = 0;
  // the module and its ancestors, their paths' bytes counted before each is made (a key of a
  // million segments names a million modules whose paths add up to terabytes)
  const auto add_module = [&](const std::string& path) {
    const auto add = [&](std::size_t length) {
      if (modules.count(path.substr(0, length))) return;
      path_bytes += length;
      if (path_bytes > kMaxModulePathBytes) throw Error(file + ": " + kModulePathsTooLongMessage);
      created.push_back(path.substr(0, length));
      modules.try_emplace(created.back());
    };
    for (std::size_t dot = path.find('.'); dot != std::string::npos; dot = path.find('.', dot + 1))
      add(dot);
    add(path.size());
  };

  // the keys of each storage: views of one storage list each other, whatever their offsets
  std::unordered_map<std::string, std::vector<std::string>> keys_of;
  for (const StateDictTensor& t : tensors)
    if (!t.storage.empty()) keys_of[t.storage].push_back(t.key);

  ModelCounts<std::string> counts;
  std::unordered_set<std::string> counted;  // the identities in `dtypes`
  std::map<std::string, std::int64_t> dtypes;
  std::vector<TensorMetadata> outside;  // the checkpoint's tensors outside its state dict
  for (std::size_t i = 0; i < tensors.size(); ++i) {
    const StateDictTensor& t = tensors[i];
    auto [path, name] = t.in_state_dict ? module_and_name(t.dict_key)
                                        : std::pair<std::string, std::string>{kRootPath, t.key};
    if (path != kRootPath) add_module(path);
    Module& module = modules.at(path);
    if (t.in_state_dict) {
      // a tensor of its own, or the first key of a shared one, adds to the totals
      const std::string identity =
          t.identity.empty() ? "#" + std::to_string(i) : "=" + t.identity;
      counts.parameter(module.counts, identity, t.numel, false, t.nbytes);
      if (counted.insert(identity).second) add_count(dtypes[t.dtype->python_name()], t.numel);
    }
    if (!details.tensors) continue;
    TensorMetadata m;
    m.name = std::move(name);
    m.kind = t.in_state_dict ? "parameter" : "checkpoint";
    m.device = t.device;
    m.requires_grad = t.requires_grad;
    m.storage_crc32 = t.storage_crc32;
    m.shape = t.shape;
    m.dtype = t.dtype->python_name();
    m.numel = t.numel;
    m.nbytes = t.nbytes;
    m.key = t.key;
    m.file = t.file;
    m.data_crc32 = t.data_crc32;
    if (!t.storage.empty())
      for (const std::string& other : keys_of.at(t.storage))
        if (other != t.key) m.shared_with.push_back(other);
    (t.in_state_dict ? module.tensors : outside).push_back(std::move(m));
  }

  std::vector<std::string> paths;
  if (order == ModuleOrder::first_key) {
    paths = first_key_order(created);
  } else {
    paths = std::move(created);
    std::sort(paths.begin(), paths.end(), module_path_before);
  }
  std::vector<ModuleMetadata> records;
  records.reserve(paths.size());
  for (const std::string& path : paths) {
    Module& module = modules.at(path);
    ModuleDetails module_details;
    if (details.tensors) module_details.tensors = std::move(module.tensors);
    records.emplace_back(path, std::nullopt, module.counts.parameters, std::nullopt, std::nullopt,
                         std::nullopt, std::move(module_details));
  }
  weights.dtypes.assign(dtypes.begin(), dtypes.end());
  ModelDetails model_details;
  if (details.tensors) {
    model_details.parameter_bytes = counts.parameter_bytes();
    model_details.checkpoint_tensors = std::move(outside);
  }
  model_details.weights_file = std::move(weights);
  return ModelMetadata(std::nullopt, counts.total(), std::nullopt, std::move(records),
                       std::move(model_details));
}

}  // namespace vin::diagnostics
