#include "vin/diagnostics/formats/weights_sets.h"

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>
#include <utility>
#include <vector>

#include "vin/diagnostics/platform/parallel_for.h"
#include "vin/diagnostics/formats/model_file.h"
#include "vin/diagnostics/json/bounded_json.h"
#include "vin/diagnostics/records/error.h"
#include "vin/diagnostics/text/printable.h"
#include "vin/diagnostics/weights/weights_file.h"

namespace vin::diagnostics {
namespace {

// The largest data.pkl read: a checkpoint's values beside its tensors (an optimizer's
// param_groups, a training history) are far smaller; the pickle reader's limits bound the rest
constexpr std::uint64_t kMaxCheckpointPickleBytes = std::uint64_t{1} << 30;
// A sharded set's index: a key and a file name per tensor (a 400-billion-parameter model's is a
// few MiB)
constexpr std::uint64_t kMaxIndexBytes = std::uint64_t{64} << 20;
constexpr std::size_t kMaxIndexDepth = 16;
// The shards of a set read at once, at most (each file's checksums use every core besides)
constexpr unsigned kShardsAtOnce = 4;

// One weights file of any single-file format, its WeightsFile.format the table's name
WeightsContent single_file_content(const ClassifiedFile& file, const InspectDetails& details) {
  if (is_safetensors(file))
    return naming_out_of_memory(file.path(), "reading the safetensors file",
                                [&] { return safetensors_content(*file.file, details); });
  if (is_torch_save(file))
    return naming_out_of_memory(file.path(), "reading the torch.save file", [&] {
      return torch_save_content(*open_torch_save(file, kMaxCheckpointPickleBytes), details);
    });
  refuse(file, kDescribe);
}

WeightsContent file_content(const ClassifiedFile& file, const InspectDetails& details) {
  WeightsContent content = single_file_content(file, details);
  content.weights.format = std::string(format_of(file.kind).name);
  return content;
}

// A sharded set from its index (`{"metadata": {"total_size": N}, "weight_map": {key: shard}}`):
// each shard, a file beside the index, read as one weights file; the set refused where a shard
// is missing, a tensor lies in two shards or in another than the index says, or the tensors'
// bytes differ from total_size.
WeightsContent sharded_content(const ClassifiedFile& index, const InspectDetails& details) {
  const std::string& path = index.path();
  Json json;
  try {
    json = parse_bounded_json(index.file->read_all(kMaxIndexBytes, "a sharded set's index"),
                              kMaxIndexDepth);
  } catch (const Error&) {
    throw;
  } catch (const std::exception&) {
    throw Error(path + ": not a sharded set's index: not valid JSON of at most " +
                std::to_string(kMaxIndexDepth) + " levels");
  }
  const auto map = json.find("weight_map");
  if (map == json.end() || !map->is_object())
    throw Error(path + ": not a sharded set's index: it has no weight_map object");
  std::map<std::string, std::string> shard_of;  // key -> shard, as the index says
  std::set<std::string> shards;
  for (auto it = map->begin(); it != map->end(); ++it) {
    if (!it->is_string())
      throw Error(path + ": its weight_map gives " + printable(it.key(), 200) +
                  " something other than a file name");
    const std::string& name = it->get_ref<const std::string&>();
    if (name.empty() || name == "." || name == ".." || name.find('/') != std::string::npos ||
        name.find('\\') != std::string::npos || name.find('\0') != std::string::npos)
      throw Error(path + ": its weight_map names the shard " + printable(name, 200) +
                  ", which is not a file beside the index");
    shard_of.emplace(it.key(), name);
    shards.insert(name);
  }
  const std::string folder = std::filesystem::path(path).parent_path().string();
  WeightsContent out;
  out.weights.file = path;
  out.weights.format = std::string(format_of(FileKind::weights_index).name);
  out.order = ModuleOrder::sorted_names;  // unless a shard keeps its keys' order (below)
  const auto metadata = json.find("metadata");
  out.weights.metadata = metadata != json.end() ? *metadata : Json(nullptr);
  std::map<std::string, std::string> found;  // key -> the shard that holds it
  // the shards read several at once (each file's checksums on every core too), each opened
  // only while it is read; of shards that cannot be read, the first in order is told
  const std::vector<std::string> names(shards.begin(), shards.end());
  std::vector<WeightsContent> parts(names.size());
  parallel_for(names.size(), std::min(usable_cores(), kShardsAtOnce), [&](std::size_t i) {
    const std::string& name = names[i];
    const std::string shard_path = folder.empty() ? name : folder + "/" + name;
    std::error_code ec;
    if (!std::filesystem::is_regular_file(shard_path, ec))
      throw Error(path + ": names the shard " + printable(name, 200) + ", which is missing (" +
                  printable(shard_path, 400) + ")");
    const ClassifiedFile shard = classify_file(shard_path, "a shard");
    if (!is_weights_kind(shard.kind) || shard.kind == FileKind::weights_index)
      throw Error(path + ": its shard " + printable(name, 200) + " is " + what_it_is(shard) +
                  ", not a weights file");
    try {
      parts[i] = file_content(shard, details);
    } catch (const Error& e) {  // what is wrong with the shard, said of the set given
      throw Error(path + ": its shard " + e.what());
    }
  });
  for (std::size_t i = 0; i < names.size(); ++i) {
    const std::string& name = names[i];
    WeightsContent& part = parts[i];
    // torch.save shards split one state dict in its order (save_pretrained's): kept
    if (part.order == ModuleOrder::first_key) out.order = ModuleOrder::first_key;
    out.weights.files.push_back(name);
    for (StateDictTensor& t : part.tensors) {
      if (!t.in_state_dict) continue;  // a shard's optimizer state is not the model's
      const auto [at, added] = found.emplace(t.dict_key, name);
      if (!added)
        throw Error(path + ": the tensor " + printable(t.dict_key, 200) + " is in two shards, " +
                    printable(at->second, 200) + " and " + printable(name, 200));
      t.key = t.dict_key;
      t.file = name;
      if (!t.identity.empty()) t.identity = name + "/" + t.identity;
      if (!t.storage.empty()) t.storage = name + "/" + t.storage;
      out.tensors.push_back(std::move(t));
    }
  }
  for (const auto& [key, name] : shard_of) {
    const auto it = found.find(key);
    if (it == found.end() || it->second != name)
      throw Error(path + ": its weight_map puts " + printable(key, 200) + " in " +
                  printable(name, 200) + ", which does not hold it" +
                  (it == found.end() ? "" : " (" + printable(it->second, 200) + " does)"));
  }
  if (metadata != json.end() && metadata->is_object()) {
    const auto total = metadata->find("total_size");
    if (total != metadata->end() && total->is_number_integer()) {
      std::int64_t bytes = 0;
      for (const StateDictTensor& t : out.tensors) bytes += t.nbytes;
      if (total->get<std::int64_t>() != bytes)
        throw Error(path + ": its total_size says " + std::to_string(total->get<std::int64_t>()) +
                    " bytes, but its shards' tensors hold " + std::to_string(bytes));
    }
  }
  return out;
}


WeightsContent content_of(const ClassifiedFile& file, const InspectDetails& details) {
  if (file.kind == FileKind::weights_index)
    return naming_out_of_memory(file.path(), "reading the sharded set",
                                [&] { return sharded_content(file, details); });
  return file_content(file, details);
}

}  // namespace

ModelMetadata describe_weights_file(const ClassifiedFile& file, const InspectDetails& details) {
  return model_of_weights(file.path(), content_of(file, details), details);
}

std::string model_file_in_directory(const std::string& directory) {
  std::vector<std::string> indexes, weights;
  std::error_code ec;
  std::size_t seen = 0;
  for (const auto& entry : std::filesystem::directory_iterator(directory, ec)) {
    if (++seen > kMaxDirectoryEntries)
      throw Error(directory + ": a directory of more than " +
                  std::to_string(kMaxDirectoryEntries) + " entries, not a model's");
    if (!entry.is_regular_file(ec)) continue;
    const std::string name = entry.path().filename().string();
    const auto ends = [&](std::string_view tail) {
      return name.size() >= tail.size() && name.compare(name.size() - tail.size(), tail.size(), tail) == 0;
    };
    if (ends(".index.json")) indexes.push_back(entry.path().string());
    else if (ends(".safetensors") || ends(".bin") || ends(".pt") || ends(".pth"))
      weights.push_back(entry.path().string());
  }
  if (ec) throw Error(directory + ": cannot list the directory (" + ec.message() + ")");
  std::sort(indexes.begin(), indexes.end());
  std::sort(weights.begin(), weights.end());
  if (indexes.size() == 1) return indexes[0];
  if (indexes.empty() && weights.size() == 1) return weights[0];
  const auto names = [](const std::vector<std::string>& paths) {
    std::string out;
    for (std::size_t i = 0; i < paths.size() && i < 5; ++i)
      out += (i ? ", " : "") + printable(std::filesystem::path(paths[i]).filename().string(), 100);
    return out + (paths.size() > 5 ? ", ..." : "");
  };
  if (indexes.size() > 1)
    throw Error(directory + ": a directory of " + std::to_string(indexes.size()) +
                " sharded sets' indexes (" + names(indexes) + "); name the one to read");
  if (weights.empty())
    throw Error(directory + ": a directory without a weights file or a sharded set's index "
                            "(*.safetensors, *.bin, *.pt, *.pth, *.index.json)");
  throw Error(directory + ": a directory of " + std::to_string(weights.size()) +
              " weights files and no index (" + names(weights) + "); name the one to read");
}

}  // namespace vin::diagnostics
