#include "vin/diagnostics/torch_save/torch_save_tar.h"

#include <optional>
#include <utility>

#include "vin/diagnostics/pickle/saved_tensor.h"
#include "vin/diagnostics/container/tar_archive.h"
#include "vin/diagnostics/records/error.h"
#include "vin/diagnostics/text/printable.h"

namespace vin::diagnostics {
namespace {

using Kind = PickleValue::Kind;

// the bytes a storage or tensor entry takes at the least (a pickle of 2 bytes and 8 of count
// or metadata): a count that the member's bytes cannot hold is refused before the loop
constexpr std::uint64_t kLeastEntryBytes = 10;

// A storage or tensor key as the value's persistent ids spell it: str() of the int the saver
// wrote (its object's address), or nothing for a value that is no key.
std::optional<std::string> saved_key(PickleRef v) {
  if (v->kind == Kind::integer) return std::to_string(v->integer);
  if (v->kind == Kind::string) return v->text;
  return std::nullopt;
}

// A member's count of entries, the pickle at `at` (moved past it): a non-negative int no larger
// than the member's bytes can hold entries of.
std::int64_t entry_count(const InputFile& file, std::uint64_t& at, std::uint64_t end,
                         const std::string& failure, const char* entries) {
  const std::uint64_t begin = at;
  const PickleDocument count = pickle_in_file(file, at, end, failure, "count");
  if (count.root->kind != Kind::integer || count.root->integer < 0 ||
      static_cast<std::uint64_t>(count.root->integer) > (end - begin) / kLeastEntryBytes)
    throw Error(failure + "its count of " + entries + " is not a number its bytes can hold");
  return count.root->integer;
}

// The tuple `v` of `n` items, or null.
const std::vector<PickleRef>* tuple_of(PickleRef v, std::size_t n) {
  return v->kind == Kind::tuple && v->items.size() == n ? &v->items : nullptr;
}

}  // namespace

std::uint64_t TorchSaveTar::read_integer(std::uint64_t at, int width, const std::string& failure,
                                         const std::string& what) const {
  const auto v = saved_integer(*file_, at, width, big_endian_);
  if (!v) throw Error(failure + "its " + what + " at byte " + std::to_string(at) + " cannot be read");
  return *v;
}

void TorchSaveTar::read_storages(std::uint64_t begin, std::uint64_t end) {
  const std::string failure = file_->path() + ": not a readable torch.save tar file: member storages: ";
  std::uint64_t at = begin;
  const std::int64_t count = entry_count(*file_, at, end, failure, "storages");
  for (std::int64_t i = 0; i < count; ++i) {
    const std::string what = "storage " + std::to_string(i);
    const PickleDocument header = pickle_in_file(*file_, at, end, failure, what);
    const auto* fields = tuple_of(header.root, 3);  // (key, location, storage type)
    const auto key = fields ? saved_key((*fields)[0]) : std::nullopt;
    if (!key || (*fields)[1]->kind != Kind::string || (*fields)[2]->kind != Kind::global)
      throw Error(failure + "its " + what + " is not (key, location, storage type)");
    const std::string name = printable(*key, 100);
    Storage storage;
    storage.type = (*fields)[2]->text;
    storage.location = (*fields)[1]->text;
    storage.dtype = storage_dtype(storage.type);
    if (!storage.dtype)
      throw Error(failure + "the storage " + name + " is of type " + printable(storage.type, 100) +
                  ", which this tool does not know");
    if (end - at < 8)
      throw Error(failure + "the storage " + name + " is cut short (the member ends at byte " +
                  std::to_string(end) + ")");
    const std::uint64_t elements = read_integer(at, 8, failure, "storage " + name + "'s count");
    at += 8;
    const auto element = static_cast<std::uint64_t>(storage.dtype->element_size);
    if (elements > (end - at) / element)
      throw Error(failure + "the storage " + name + " of " + std::to_string(elements) +
                  " elements needs " + std::to_string(elements) + " x " + std::to_string(element) +
                  " bytes, more than the " + std::to_string(end - at) + " left in the member");
    storage.begin = at;
    storage.numel = static_cast<std::int64_t>(elements);
    at += elements * element;
    if (!storages_.emplace(*key, std::move(storage)).second)
      throw Error(failure + "the storage " + name + " is listed twice");
  }
  // the views: [(key, root key, offset, elements)], each inside its root (which may be a view
  // listed before it: torch slices whatever the key names)
  const PickleDocument views = pickle_in_file(*file_, at, end, failure, "storage views");
  if (views.root->kind != Kind::list)
    throw Error(failure + "its storage views are not a list");
  for (const PickleRef view : views.root->items) {
    const auto* fields = tuple_of(view, 4);
    const auto key = fields ? saved_key((*fields)[0]) : std::nullopt;
    const auto root = fields ? saved_key((*fields)[1]) : std::nullopt;
    if (!key || !root || (*fields)[2]->kind != Kind::integer ||
        (*fields)[3]->kind != Kind::integer)
      throw Error(failure + "a storage view that is not (key, root key, offset, elements)");
    const std::string name = printable(*key, 100);
    const auto it = storages_.find(*root);
    if (it == storages_.end())
      throw Error(failure + "the storage view " + name + " is of the storage " +
                  printable(*root, 100) + ", which is not among the storages");
    const std::int64_t offset = (*fields)[2]->integer;
    const std::int64_t numel = (*fields)[3]->integer;
    if (offset < 0 || numel < 0 || offset > it->second.numel || numel > it->second.numel - offset)
      throw Error(failure + "the storage view " + name + " of elements " + std::to_string(offset) +
                  " to " + std::to_string(offset) + " + " + std::to_string(numel) +
                  " is outside its storage's " + std::to_string(it->second.numel));
    Storage slice = it->second;  // a copy: emplace may move the root
    slice.begin += static_cast<std::uint64_t>(offset) *
                   static_cast<std::uint64_t>(slice.dtype->element_size);
    slice.numel = numel;
    if (!storages_.emplace(*key, std::move(slice)).second)
      throw Error(failure + "the storage " + name + " is listed twice");
  }
}

PersistentTensors TorchSaveTar::read_tensors(std::uint64_t begin, std::uint64_t end) const {
  const std::string failure = file_->path() + ": not a readable torch.save tar file: member tensors: ";
  std::uint64_t at = begin;
  const std::int64_t count = entry_count(*file_, at, end, failure, "tensors");
  PersistentTensors tensors;
  for (std::int64_t i = 0; i < count; ++i) {
    const std::string what = "tensor " + std::to_string(i);
    const PickleDocument header = pickle_in_file(*file_, at, end, failure, what);
    const auto* fields = tuple_of(header.root, 3);  // (key, storage key, tensor type)
    const auto key = fields ? saved_key((*fields)[0]) : std::nullopt;
    if (!key) throw Error(failure + "its " + what + " is not (key, storage key, tensor type)");
    const std::string name = "the tensor " + printable(*key, 100);
    const auto storage_key = saved_key((*fields)[1]);
    if (!storage_key) throw Error(failure + name + " has no storage");
    const auto found = storages_.find(*storage_key);
    if (found == storages_.end())
      throw Error(failure + name + "'s storage " + printable(*storage_key, 100) +
                  " is not among the storages");
    const Storage& storage = found->second;
    // the metadata: the dimensions (4 bytes, then 4 torch skips), sizes, strides, offset
    if (end - at < 8) throw Error(failure + name + "'s metadata is cut short");
    const std::uint64_t dims = big_endian_ ? read_integer(at, 8, failure, name + "'s dimensions")
                                           : read_integer(at, 4, failure, name + "'s dimensions");
    at += 8;
    if (dims >= 0x80000000u || dims * 16 + 8 > end - at)
      throw Error(failure + name + " of " + std::to_string(static_cast<std::int32_t>(dims)) +
                  " dimensions: more than its member's bytes can describe");
    SavedTensor t;  // checked as the pickle reader checks every tensor against its storage
    t.dtype = storage.dtype;
    t.numel = 1;
    for (std::uint64_t d = 0; d < dims; ++d, at += 8) {
      const auto size = static_cast<std::int64_t>(read_integer(at, 8, failure, name + "'s size"));
      if (size < 0 || (size != 0 && t.numel > INT64_MAX / size))
        throw Error(failure + name + " has a size that is negative or overflows");
      t.shape.push_back(size);
      t.numel *= size;
    }
    for (std::uint64_t d = 0; d < dims; ++d, at += 8)
      t.strides.push_back(static_cast<std::int64_t>(read_integer(at, 8, failure, name + "'s stride")));
    t.offset = static_cast<std::int64_t>(read_integer(at, 8, failure, name + "'s offset"));
    at += 8;
    // inside its storage (as Tensor::set_ demands)
    const auto reached = bytes_reached(t);
    if (!reached || *reached > static_cast<std::uint64_t>(storage.numel) *
                                   static_cast<std::uint64_t>(storage.dtype->element_size))
      throw Error(failure + name + " (offset " + std::to_string(t.offset) +
                  ") reaches past the end of its storage " + printable(*storage_key, 100) + " of " +
                  std::to_string(storage.numel) + " elements, or has a negative stride");
    PersistentTensor& out = tensors[*key];
    if (!out.storage_type.empty()) throw Error(failure + name + " is listed twice");
    out.storage_type = storage.type;
    out.storage_key = *storage_key;
    out.location = storage.location;
    out.storage_numel = storage.numel;
    out.offset = t.offset;
    out.shape = std::move(t.shape);
    out.strides = std::move(t.strides);
  }
  return tensors;
}

TorchSaveTar::TorchSaveTar(InputFilePtr file) : file_(std::move(file)) {
  const std::string& path = file_->path();
  const std::string failure = path + ": not a readable torch.save tar file: ";
  const auto tar = read_tar(*file_);
  if (!tar) throw Error(path + ": not a torch.save tar file (not a tar)");
  if (tar->problem) throw Error(failure + *tar->problem);
  std::unordered_map<std::string, TarMember> members;
  for (const TarMember& m : tar->members)
    if (!members.emplace(m.name, m).second)
      throw Error(failure + "the member " + printable(m.name, 100) + " is there twice");
  const auto member = [&](const char* name) -> const TarMember& {
    const auto it = members.find(name);
    if (it == members.end()) throw Error(failure + "it has no member " + name);
    return it->second;
  };
  // the byte order the storages were written in; torch itself reads them as its machine's
  if (const auto it = members.find("sys_info"); it != members.end()) {
    std::uint64_t at = it->second.begin;
    const PickleDocument info = pickle_in_file(*file_, at, at + it->second.size,
                                               failure + "member sys_info: ", "value");
    const PickleRef little = dict_value(info.root, "little_endian");
    if (!little || little->kind != Kind::boolean)
      throw Error(failure + "member sys_info: it does not say the byte order");
    big_endian_ = !little->boolean;
  }
  const TarMember& storages = member("storages");
  read_storages(storages.begin, storages.begin + storages.size);
  const TarMember& tensors = member("tensors");
  const PersistentTensors described = read_tensors(tensors.begin, tensors.begin + tensors.size);
  const TarMember& pickle = member("pickle");
  std::uint64_t at = pickle.begin;
  value_ = pickle_in_file(*file_, at, pickle.begin + pickle.size, failure + "member pickle: ",
                          "value", &described);
}

StorageBytes TorchSaveTar::storage(const SavedTensor& tensor, const std::string& where) const {
  const auto it = storages_.find(tensor.storage_key);
  if (it == storages_.end())
    throw Error(label() + ": " + where + ": its storage " + printable(tensor.storage_key, 100) +
                " is not among the file's storages");
  StorageBytes bytes;
  bytes.file = file_.get();
  bytes.begin = it->second.begin;
  bytes.size = static_cast<std::uint64_t>(it->second.numel) *
               static_cast<std::uint64_t>(it->second.dtype->element_size);
  bytes.big_endian = big_endian_;
  return bytes;
}

}  // namespace vin::diagnostics
