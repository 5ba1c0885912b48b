#include "vin/diagnostics/archive/weights_file.h"

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>
#include <unordered_map>
#include <utility>
#include <vector>

#include "vin/diagnostics/archive/checkpoint.h"
#include "vin/diagnostics/archive/legacy_torch_save.h"
#include "vin/diagnostics/archive/pickle_reader.h"
#include "vin/diagnostics/archive/torch_save_tar.h"
#include "vin/diagnostics/archive/safetensors_file.h"
#include "vin/diagnostics/archive/state_dict_model.h"
#include "vin/diagnostics/archive/torch_save_file.h"
#include "vin/diagnostics/archive/zip_archive.h"
#include "vin/diagnostics/records/bounded_json.h"
#include "vin/diagnostics/records/error.h"
#include "vin/diagnostics/text/printable.h"

namespace vin::diagnostics {
namespace {

// The largest data.pkl read: a checkpoint's values beside its tensors (an optimizer's
// param_groups, a training history) are far smaller; the pickle reader's limits bound the rest
constexpr std::uint64_t kMaxCheckpointPickleBytes = std::uint64_t{1} << 30;
// A sharded set's index: a key and a file name per tensor (a 400-billion-parameter model's is a
// few MiB)
constexpr std::uint64_t kMaxIndexBytes = std::uint64_t{64} << 20;
constexpr std::size_t kMaxIndexDepth = 16;

// What a weights file holds before it is made a model: its tensors and its container record.
struct WeightsContent {
  std::vector<StateDictTensor> tensors;
  WeightsFile weights;
  /// a safetensors header sorts its names as text: the keys' order tells no module order
  ModuleOrder order = ModuleOrder::first_key;
};

WeightsContent safetensors_content(const InputFile& file, const InspectDetails& details) {
  const SafetensorsHeader header = read_safetensors_header(file);
  WeightsContent out;
  out.tensors.reserve(header.tensors.size());
  for (const SafetensorsTensor& t : header.tensors) {
    StateDictTensor s;
    s.key = s.dict_key = t.key;
    s.dtype = t.dtype;
    s.shape = t.shape;
    s.numel = t.numel;
    s.nbytes = static_cast<std::int64_t>(t.end - t.begin);
    // a safetensors tensor's bytes are its elements, row-major and little-endian
    if (details.tensors) s.data_crc32 = crc32_text(crc32_of_range(file, t.begin, t.end));
    out.tensors.push_back(std::move(s));
  }
  out.weights.file = file.path();
  out.weights.format = "safetensors";
  out.order = ModuleOrder::sorted_names;
  out.weights.metadata = header.metadata;
  return out;
}

WeightsContent torch_save_content(const TorchSaveSource& saved, const InspectDetails& details) {
  const std::string& path = saved.label();
  Checkpoint checkpoint = read_checkpoint(saved.root(), path);
  WeightsContent out;
  out.tensors.reserve(checkpoint.tensors.size());
  std::unordered_map<std::string, std::uint32_t> storage_crcs;
  for (const CheckpointTensor& c : checkpoint.tensors) {
    const std::string where = "the tensor " + printable(c.key.empty() ? "(the file's)" : c.key, 200);
    const SavedTensor t = saved_tensor(c.tensor, path + ": " + where);
    // the storage record is found and checked for every tensor, listed or not
    StorageBytes bytes = saved.storage(t, where);
    // a legacy file records no CRC: its storage's bytes read for one, once per storage
    if (!bytes.crc && details.tensors) {
      auto [it, added] = storage_crcs.try_emplace(t.storage_key, 0u);
      if (added) it->second = crc32_of_range(*bytes.file, bytes.begin, bytes.begin + bytes.size);
      bytes.crc = it->second;
    }
    StateDictTensor s;
    s.key = c.key;
    s.dict_key = c.dict_key;
    s.in_state_dict = c.in_state_dict;
    s.dtype = t.dtype;
    s.shape = t.shape;
    s.numel = t.numel;
    s.nbytes = t.nbytes();
    s.identity = t.identity();
    s.storage = t.storage_key;
    s.device = t.device;
    s.requires_grad = t.requires_grad;
    if (bytes.crc) s.storage_crc32 = crc32_text(*bytes.crc);
    if (details.tensors) s.data_crc32 = crc32_text(elements_crc32(t, bytes));
    out.tensors.push_back(std::move(s));
  }
  const PickleRef root = saved.root();
  // the whole value made by a call the reader does not rebuild (posix.system(...)): named as the
  // call it is, not as the class of an object
  if (root->kind == PickleValue::Kind::opaque && !root->text.empty() &&
      !rebuilt_global(root->text) && checkpoint.tensors.empty())
    throw Error(path + ": a torch.save file whose value is made by calling " +
                printable(root->text, 200) +
                ", a global this reader does not rebuild (nothing is called); it holds no "
                "tensors to describe");
  if (checkpoint.state_dict_path.is_null() && checkpoint.values.size() == 1 &&
      checkpoint.values[0].key.empty() && checkpoint.values[0].value.is_null() &&
      checkpoint.tensors.empty())  // one object and nothing else: torch.save(model)
    throw Error(path + ": a torch.save file holding a pickled Python object of class " +
                printable(checkpoint.values[0].type, 200) +
                " (torch.save of a whole model), whose tensors lie in its state, which this tool "
                "does not rebuild; save model.state_dict() to describe its weights, or the "
                "model with torch.jit.save(torch.jit.script(model), path)");
  out.weights.file = path;
  out.weights.format = saved.format();
  out.weights.state_dict_path = std::move(checkpoint.state_dict_path);
  out.weights.values = std::move(checkpoint.values);
  return out;
}

// One weights file of any single-file format
WeightsContent file_content(const ClassifiedFile& file, const InspectDetails& details) {
  switch (file.kind) {
    case FileKind::safetensors:
      return naming_out_of_memory(file.path(), "reading the safetensors file",
                                  [&] { return safetensors_content(*file.file, details); });
    case FileKind::torch_save_zip:
      return naming_out_of_memory(file.path(), "reading the torch.save file", [&] {
        return torch_save_content(
            TorchSaveZip(*file.zip, file.path(), kMaxCheckpointPickleBytes), details);
      });
    case FileKind::legacy_pickle:
      return naming_out_of_memory(file.path(), "reading the torch.save file", [&] {
        return torch_save_content(LegacyTorchSave(file.file), details);
      });
    case FileKind::torch_save_tar:
      return naming_out_of_memory(file.path(), "reading the torch.save file", [&] {
        return torch_save_content(TorchSaveTar(file.file), details);
      });
    default:
      throw Error(file.path() + ": is " + std::string(describe(file.kind)) +
                  ", not a weights file");
  }
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
  out.weights.format = "sharded";
  out.order = ModuleOrder::sorted_names;  // unless a shard keeps its keys' order (below)
  const auto metadata = json.find("metadata");
  out.weights.metadata = metadata != json.end() ? *metadata : Json(nullptr);
  std::map<std::string, std::string> found;  // key -> the shard that holds it
  for (const std::string& name : shards) {
    const std::string shard_path = folder.empty() ? name : folder + "/" + name;
    std::error_code ec;
    if (!std::filesystem::is_regular_file(shard_path, ec))
      throw Error(path + ": names the shard " + printable(name, 200) + ", which is missing (" +
                  printable(shard_path, 400) + ")");
    const ClassifiedFile shard = classify_file(shard_path, "a shard");
    if (!is_weights_kind(shard.kind) || shard.kind == FileKind::weights_index)
      throw Error(path + ": its shard " + printable(name, 200) + " is " + what_it_is(shard) +
                  ", not a weights file");
    WeightsContent part;
    try {
      part = file_content(shard, details);
    } catch (const Error& e) {  // what is wrong with the shard, said of the set given
      throw Error(path + ": its shard " + e.what());
    }
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

ModelMetadata describe_torch_save(const TorchSaveSource& saved, const InspectDetails& details) {
  WeightsContent content = torch_save_content(saved, details);
  return model_of_state_dict(saved.label(), content.tensors, std::move(content.weights), details,
                             content.order);
}

bool is_weights_kind(FileKind kind) {
  return kind == FileKind::safetensors || kind == FileKind::torch_save_zip ||
         kind == FileKind::legacy_pickle || kind == FileKind::torch_save_tar ||
         kind == FileKind::weights_index;
}

ModelMetadata describe_weights_file(const ClassifiedFile& file, const InspectDetails& details) {
  WeightsContent content = content_of(file, details);
  return model_of_state_dict(file.path(), content.tensors, std::move(content.weights), details,
                             content.order);
}

std::string weights_in_directory(const std::string& directory) {
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
