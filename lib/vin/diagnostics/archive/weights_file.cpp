#include "vin/diagnostics/archive/weights_file.h"

#include <unordered_map>
#include <utility>
#include <vector>

#include "vin/diagnostics/archive/checkpoint.h"
#include "vin/diagnostics/archive/legacy_torch_save.h"
#include "vin/diagnostics/archive/safetensors_file.h"
#include "vin/diagnostics/archive/state_dict_model.h"
#include "vin/diagnostics/archive/torch_save_file.h"
#include "vin/diagnostics/archive/zip_archive.h"
#include "vin/diagnostics/records/error.h"
#include "vin/diagnostics/text/printable.h"

namespace vin::diagnostics {
namespace {

ModelMetadata describe_safetensors(const InputFile& file, const InspectDetails& details) {
  const SafetensorsHeader header = read_safetensors_header(file);
  std::vector<StateDictTensor> tensors;
  tensors.reserve(header.tensors.size());
  for (const SafetensorsTensor& t : header.tensors) {
    StateDictTensor s;
    s.key = s.dict_key = t.key;
    s.dtype = t.dtype;
    s.shape = t.shape;
    s.numel = t.numel;
    s.nbytes = static_cast<std::int64_t>(t.end - t.begin);
    // a safetensors tensor's bytes are its elements, row-major and little-endian
    if (details.tensors) s.data_crc32 = crc32_text(crc32_of_range(file, t.begin, t.end));
    tensors.push_back(std::move(s));
  }
  WeightsFile weights;
  weights.file = file.path();
  weights.format = "safetensors";
  weights.metadata = header.metadata;
  return model_of_state_dict(file.path(), tensors, std::move(weights), details);
}

// The largest data.pkl read: a checkpoint's values beside its tensors (an optimizer's
// param_groups, a training history) are far smaller; the pickle reader's limits bound the rest
constexpr std::uint64_t kMaxCheckpointPickleBytes = std::uint64_t{1} << 30;

}  // namespace

ModelMetadata describe_torch_save(const TorchSaveSource& saved, const InspectDetails& details) {
  const std::string& path = saved.label();
  Checkpoint checkpoint = read_checkpoint(saved.root(), path);
  std::vector<StateDictTensor> tensors;
  tensors.reserve(checkpoint.tensors.size());
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
    s.device = t.device;
    s.requires_grad = t.requires_grad;
    if (bytes.crc) s.storage_crc32 = crc32_text(*bytes.crc);
    if (details.tensors) s.data_crc32 = crc32_text(elements_crc32(t, bytes));
    tensors.push_back(std::move(s));
  }
  if (checkpoint.state_dict_path.is_null() && checkpoint.values.size() == 1 &&
      checkpoint.values[0].key.empty() && checkpoint.values[0].value.is_null() &&
      checkpoint.tensors.empty())  // one object and nothing else: torch.save(model)
    throw Error(path + ": a torch.save file holding a pickled Python object of class " +
                printable(checkpoint.values[0].type, 200) +
                " (torch.save of a whole model), whose tensors lie in its state, which this tool "
                "does not rebuild; save model.state_dict() to describe its weights, or the "
                "model with torch.jit.save(torch.jit.script(model), path)");
  WeightsFile weights;
  weights.file = path;
  weights.format = saved.format();
  weights.state_dict_path = std::move(checkpoint.state_dict_path);
  weights.values = std::move(checkpoint.values);
  return model_of_state_dict(path, tensors, std::move(weights), details);
}

bool is_weights_kind(FileKind kind) {
  return kind == FileKind::safetensors || kind == FileKind::torch_save_zip ||
         kind == FileKind::legacy_pickle;
}

ModelMetadata describe_weights_file(const ClassifiedFile& file, const InspectDetails& details) {
  if (file.kind == FileKind::safetensors)
    return naming_out_of_memory(file.path(), "reading the safetensors file",
                                [&] { return describe_safetensors(*file.file, details); });
  if (file.kind == FileKind::torch_save_zip)
    return naming_out_of_memory(file.path(), "reading the torch.save file", [&] {
      return describe_torch_save(TorchSaveZip(*file.zip, file.path(), kMaxCheckpointPickleBytes),
                                 details);
    });
  if (file.kind == FileKind::legacy_pickle)
    return naming_out_of_memory(file.path(), "reading the torch.save file", [&] {
      return describe_torch_save(LegacyTorchSave(file.file), details);
    });
  throw Error(file.path() + ": is " + std::string(describe(file.kind)) + ", not a weights file");
}

}  // namespace vin::diagnostics
