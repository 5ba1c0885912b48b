#include "vin/diagnostics/torch_save/legacy_torch_save.h"

#include <algorithm>
#include <utility>

#include "vin/diagnostics/pickle/saved_tensor.h"
#include "vin/diagnostics/pickle/pickle_safety.h"
#include "vin/diagnostics/records/error.h"
#include "vin/diagnostics/text/printable.h"

namespace vin::diagnostics {
namespace {

using Kind = PickleValue::Kind;

// torch.serialization's MAGIC_NUMBER, 0x1950a86a20f9469cfc6c, as LONG1 writes it
constexpr std::string_view kTorchSaveMagic = "\x6c\xfc\x9c\x46\xf9\x20\x6a\xa8\x50\x19";
constexpr std::int64_t kLegacyProtocolVersion = 1001;

}  // namespace

PickleDocument LegacyTorchSave::pickle_at(std::uint64_t& offset, const char* what) {
  return pickle_in_file(*file_, offset, file_->size(),
                        file_->path() + ": not a readable legacy torch.save file: ", what);
}

LegacyTorchSave::LegacyTorchSave(InputFilePtr file) : file_(std::move(file)) {
  const std::string& path = file_->path();
  std::uint64_t at = 0;
  const PickleDocument magic = pickle_at(at, "magic number");
  const PickleRef m = magic.root;
  if (m->kind != Kind::opaque || m->text != "builtins.int" || m->items.empty() ||
      m->items[0]->text != kTorchSaveMagic)
    throw Error(path + ": not a legacy torch.save file (it does not start with torch.save's "
                       "magic number)");
  const PickleDocument protocol = pickle_at(at, "protocol version");
  if (protocol.root->kind != Kind::integer || protocol.root->integer != kLegacyProtocolVersion)
    throw Error(path + ": a legacy torch.save file of a protocol other than 1001, which this "
                       "tool does not read");
  const PickleDocument sys_info = pickle_at(at, "system information");
  const PickleRef little = dict_value(sys_info.root, "little_endian");
  if (!little || little->kind != Kind::boolean)
    throw Error(path + ": not a readable legacy torch.save file: its system information does "
                       "not say the byte order");
  big_endian_ = !little->boolean;
  value_ = pickle_at(at, "value");
  const PickleDocument keys = pickle_at(at, "storage keys");
  if (keys.root->kind != Kind::list)
    throw Error(path + ": not a readable legacy torch.save file: its storage keys are not a list");

  // each storage's element size, from the references the value makes to it
  std::unordered_map<std::string, const Dtype*> dtypes;
  for (const auto& block : value_.blocks)
    for (std::size_t i = 0; i < PickleDocument::kBlockValues; ++i) {
      const PickleValue& v = block[i];
      if (v.kind != Kind::storage || v.items.size() < 3 || v.items[2]->kind != Kind::string)
        continue;
      const Dtype* dtype = storage_dtype(v.text);
      if (!dtype) continue;  // named where a tensor uses it (saved_tensor)
      const auto [it, added] = dtypes.emplace(v.items[2]->text, dtype);
      if (!added && it->second != dtype)
        throw Error(path + ": not a readable legacy torch.save file: the storage " +
                    printable(v.items[2]->text, 100) + " is referred to as two types");
    }
  // then the storages, one after the other in the keys' order: a count, then the elements
  for (const PickleRef key : keys.root->items) {
    if (key->kind != Kind::string)
      throw Error(path + ": not a readable legacy torch.save file: a storage key that is not a "
                         "string");
    const std::string name = printable(key->text, 100);
    const auto dtype = dtypes.find(key->text);
    if (dtype == dtypes.end())
      throw Error(path + ": not a readable legacy torch.save file: the storage " + name +
                  " is listed, but no tensor of a known dtype refers to it");
    if (storages_.count(key->text))
      throw Error(path + ": not a readable legacy torch.save file: the storage " + name +
                  " is listed twice");
    const auto count = saved_integer(*file_, at, 8, big_endian_);
    if (!count)
      throw Error(path + ": cut short: the storage " + name + " is missing (the file ends at " +
                  "byte " + std::to_string(file_->size()) + ")");
    at += 8;
    const auto element = static_cast<std::uint64_t>(dtype->second->element_size);
    const std::uint64_t left = file_->size() - at;
    if (*count > left / element)
      throw Error(path + ": cut short: the storage " + name + " of " + std::to_string(*count) +
                  " elements needs " + std::to_string(*count) + " x " + std::to_string(element) +
                  " bytes, more than the " + std::to_string(left) + " left in the file");
    storages_.emplace(key->text, Place{at, *count * element});
    at += *count * element;
  }
}

StorageBytes LegacyTorchSave::storage(const SavedTensor& tensor, const std::string& where) const {
  const auto it = storages_.find(tensor.storage_key);
  if (it == storages_.end())
    throw Error(label() + ": " + where + ": its storage " + printable(tensor.storage_key, 100) +
                " is not among the file's storages");
  if (const auto problem = storage_problem("the storage " + printable(tensor.storage_key, 100),
                                           *tensor.dtype, tensor.storage_numel, it->second.size))
    throw Error(label() + ": " + where + ": " + *problem);
  StorageBytes bytes;
  bytes.file = file_.get();
  bytes.begin = it->second.begin;
  bytes.size = it->second.size;
  bytes.big_endian = big_endian_;
  return bytes;
}

}  // namespace vin::diagnostics
