#include "vin/diagnostics/archive/state_dict_model.h"

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

ModelMetadata model_of_state_dict(const std::string& file, const std::vector<StateDictTensor>& tensors,
                                  WeightsFile weights, const InspectDetails& details) {
  // every module a key names and its ancestors; each module's tensors, in the file's order
  struct Module {
    DirectCounts counts;
    std::vector<TensorMetadata> tensors;
  };
  std::unordered_map<std::string, Module> modules;
  modules[kRootPath];
  std::size_t path_bytes = 0;
  // the module and its ancestors, their paths' bytes counted before each is made (a key of a
  // million segments names a million modules whose paths add up to terabytes)
  const auto add_module = [&](const std::string& path) {
    const auto add = [&](std::size_t length) {
      if (modules.count(path.substr(0, length))) return;
      path_bytes += length;
      if (path_bytes > kMaxModulePathBytes) throw Error(file + ": " + kModulePathsTooLongMessage);
      modules.try_emplace(path.substr(0, length));
    };
    for (std::size_t dot = path.find('.'); dot != std::string::npos; dot = path.find('.', dot + 1))
      add(dot);
    add(path.size());
  };

  // the same tensor under two keys: the keys that share it
  std::unordered_map<std::string, std::vector<std::string>> keys_of;
  for (const StateDictTensor& t : tensors)
    if (!t.identity.empty()) keys_of[t.identity].push_back(t.key);

  ModelCounts<std::string> counts;
  std::unordered_set<std::string> counted;  // the identities in `dtypes`
  std::map<std::string, std::int64_t> dtypes;
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
    if (!t.identity.empty())
      for (const std::string& other : keys_of.at(t.identity))
        if (other != t.key) m.shared_with.push_back(other);
    module.tensors.push_back(std::move(m));
  }

  std::vector<std::string> order;
  order.reserve(modules.size());
  for (const auto& entry : modules) order.push_back(entry.first);
  std::sort(order.begin(), order.end(), module_path_before);
  std::vector<ModuleMetadata> records;
  records.reserve(order.size());
  for (const std::string& path : order) {
    Module& module = modules.at(path);
    ModuleDetails module_details;
    if (details.tensors) module_details.tensors = std::move(module.tensors);
    records.emplace_back(path, std::nullopt, module.counts.parameters, std::nullopt, std::nullopt,
                         std::nullopt, std::move(module_details));
  }
  weights.dtypes.assign(dtypes.begin(), dtypes.end());
  ModelDetails model_details;
  if (details.tensors) model_details.parameter_bytes = counts.parameter_bytes();
  model_details.weights_file = std::move(weights);
  return ModelMetadata(std::nullopt, counts.total(), std::nullopt, std::move(records),
                       std::move(model_details));
}

}  // namespace vin::diagnostics
