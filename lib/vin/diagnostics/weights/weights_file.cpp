#include "vin/diagnostics/weights/weights_file.h"

#include <optional>
#include <unordered_map>
#include <utility>
#include <vector>

#include "vin/diagnostics/container/crc32.h"
#include "vin/diagnostics/pickle/saved_tensor.h"
#include "vin/diagnostics/records/error.h"
#include "vin/diagnostics/safetensors/safetensors_file.h"
#include "vin/diagnostics/text/printable.h"
#include "vin/diagnostics/weights/checkpoint.h"

namespace vin::diagnostics {

WeightsContent safetensors_content(const InputFile& file, const InspectDetails& details) {
  const SafetensorsHeader header = read_safetensors_header(file);
  WeightsContent out;
  out.tensors.reserve(header.tensors.size());
  Crc32Batch crcs;  // every tensor's, computed together
  std::vector<Crc32Batch::Ticket> data_crcs;
  for (const SafetensorsTensor& t : header.tensors) {
    StateDictTensor s;
    s.key = s.dict_key = t.key;
    s.dtype = t.dtype;
    s.shape = t.shape;
    s.numel = t.numel;
    s.nbytes = static_cast<std::int64_t>(t.end - t.begin);
    // a safetensors tensor's bytes are its elements, row-major and little-endian
    if (details.tensors) data_crcs.push_back(crcs.range(file, t.begin, t.end));
    out.tensors.push_back(std::move(s));
  }
  crcs.run();
  for (std::size_t i = 0; i < data_crcs.size(); ++i)
    out.tensors[i].data_crc32 = crc32_text(crcs.value(data_crcs[i]));
  out.weights.file = file.path();
  out.order = ModuleOrder::sorted_names;
  out.weights.metadata = header.metadata;
  return out;
}

WeightsContent torch_save_content(const TorchSaveSource& saved, const InspectDetails& details) {
  const std::string& path = saved.label();
  Checkpoint checkpoint = read_checkpoint(saved.root(), path);
  WeightsContent out;
  out.tensors.reserve(checkpoint.tensors.size());
  // the CRCs of every tensor's elements and of the storages without a recorded one, computed
  // together once every storage is found and checked (the source keeps their files open)
  Crc32Batch crcs;
  std::unordered_map<std::string, Crc32Batch::Ticket> storage_crcs;  // by storage key
  struct Asked {
    std::optional<Crc32Batch::Ticket> storage, data;
  };
  std::vector<Asked> asked;
  asked.reserve(checkpoint.tensors.size());
  for (const CheckpointTensor& c : checkpoint.tensors) {
    const std::string where = "the tensor " + printable(c.key.empty() ? "(the file's)" : c.key, 200);
    const SavedTensor t = saved_tensor(c.tensor, path + ": " + where);
    // the storage record is found and checked for every tensor, listed or not
    const StorageBytes bytes = saved.storage(t, where);
    Asked a;
    if (bytes.crc) a.storage = crcs.known(*bytes.crc);
    // a legacy file records no CRC: its storage's bytes read for one, once per storage
    if (!bytes.crc && details.tensors) {
      auto it = storage_crcs.find(t.storage_key);
      if (it == storage_crcs.end())
        it = storage_crcs
                 .emplace(t.storage_key,
                          crcs.range(*bytes.file, bytes.begin, bytes.begin + bytes.size))
                 .first;
      a.storage = it->second;
    }
    if (details.tensors) a.data = add_elements_crc32(crcs, t, bytes, a.storage);
    asked.push_back(a);
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
    out.tensors.push_back(std::move(s));
  }
  crcs.run();
  for (std::size_t i = 0; i < asked.size(); ++i) {
    if (asked[i].storage) out.tensors[i].storage_crc32 = crc32_text(crcs.value(*asked[i].storage));
    if (asked[i].data) out.tensors[i].data_crc32 = crc32_text(crcs.value(*asked[i].data));
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
  out.weights.state_dict_path = std::move(checkpoint.state_dict_path);
  out.weights.values = std::move(checkpoint.values);
  return out;
}

ModelMetadata model_of_weights(const std::string& file, WeightsContent content,
                               const InspectDetails& details) {
  return model_of_state_dict(file, content.tensors, std::move(content.weights), details,
                             content.order);
}

ModelMetadata describe_torch_save(const TorchSaveSource& saved, std::string_view format,
                                  const InspectDetails& details) {
  WeightsContent content = torch_save_content(saved, details);
  content.weights.format = std::string(format);
  return model_of_weights(saved.label(), std::move(content), details);
}

}  // namespace vin::diagnostics
