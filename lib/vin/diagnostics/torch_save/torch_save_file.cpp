#include "vin/diagnostics/torch_save/torch_save_file.h"

#include <algorithm>
#include <utility>

#include "vin/diagnostics/pickle/pickle_safety.h"
#include "vin/diagnostics/records/error.h"
#include "vin/diagnostics/text/printable.h"

namespace vin::diagnostics {

PickleDocument pickle_in_file(const InputFile& file, std::uint64_t& offset, std::uint64_t end,
                              const std::string& failure, const std::string& what,
                              const PersistentTensors* persistent) {
  constexpr std::size_t kFirstWindow = std::size_t{1} << 16;
  constexpr std::size_t kMaxPickleBytes = std::size_t{1} << 30;
  const auto fail = [&](const std::string& problem) -> PickleDocument {
    throw Error(failure + "its " + what + " at byte " + std::to_string(offset) + ": " + problem);
  };
  end = std::min(end, file.size());
  const std::string ending = end == file.size() ? "the file" : "the member";
  std::size_t window = kFirstWindow;
  for (;;) {
    const std::uint64_t left = end > offset ? end - offset : 0;
    if (left == 0) return fail("missing (" + ending + " ends there)");
    const auto n = static_cast<std::size_t>(std::min<std::uint64_t>(window, left));
    std::string bytes(n, '\0');
    if (file.read_at(offset, bytes.data(), n) != n) return fail("cut short");
    try {
      PickleDocument document = read_pickle(bytes, persistent);
      if (const auto problem = pickle_problem(std::string_view(bytes).substr(0, document.end)))
        return fail(*problem);
      offset += document.end;
      return document;
    } catch (const TruncatedPickle& e) {
      if (n == left) return fail(std::string(e.what()) + " (" + ending + " ends inside it)");
      if (window >= kMaxPickleBytes)
        return fail("longer than " + std::to_string(kMaxPickleBytes >> 20) + " MiB");
      window *= 2;
    } catch (const UnsupportedPickle& e) {
      return fail(e.what());
    }
  }
}

std::optional<std::uint64_t> saved_integer(const InputFile& file, std::uint64_t at, int width,
                                           bool big_endian) {
  unsigned char bytes[8] = {};
  const auto n = static_cast<std::size_t>(std::min(width, 8));
  if (file.read_at(at, bytes, n) != n) return std::nullopt;
  std::uint64_t v = 0;
  for (std::size_t i = 0; i < n; ++i)
    v = big_endian ? (v << 8) | bytes[i] : v | (std::uint64_t{bytes[i]} << (8 * i));
  return v;
}

StorageBytes member_bytes(const ZipArchive& zip, std::size_t index, bool big_endian,
                          InputFilePtr& keep) {
  const ZipArchive::Entry& entry = zip.entries()[index];
  StorageBytes bytes;
  bytes.size = entry.size;
  bytes.crc = entry.crc;
  bytes.big_endian = big_endian;
  if (entry.stored_at) {
    bytes.file = &zip.file();
    bytes.begin = *entry.stored_at;
    return bytes;
  }
  if (!keep) {
    ZipArchive::Member member = zip.open(index, zip.path() + ": " + printable(entry.name, 200));
    keep = InputFile::from_pieces(zip.path() + ": " + printable(entry.name, 200),
                                  [&](char* out, std::size_t n) { return member.read(out, n); });
  }
  bytes.file = keep.get();
  return bytes;
}

TorchSaveZip::TorchSaveZip(const ZipArchive& zip, std::string label,
                           std::uint64_t max_pickle_bytes)
    : zip_(zip), label_(std::move(label)), top_(zip.first_folder()) {
  const auto index = zip_.find(top_ + "data.pkl");
  if (!index) throw Error(label_ + ": is not a torch.save file (it has no data.pkl)");
  const std::string pickle = zip_.read(*index, max_pickle_bytes, top_ + "data.pkl");
  if (const auto problem = pickle_problem(pickle))
    throw Error(label_ + ": not a readable torch.save file: data.pkl: " + *problem);
  try {
    document_ = read_pickle(pickle);
  } catch (const UnsupportedPickle& e) {
    throw Error(label_ + ": not a readable torch.save file: data.pkl: " + e.what());
  }
  big_endian_ = big_endian_storages(zip_, top_, label_);
}

bool big_endian_storages(const ZipArchive& zip, const std::string& top, const std::string& label) {
  const auto order = zip.read(top + "byteorder", 16);
  if (!order || *order == "little") return false;
  if (*order == "big") return true;
  throw Error(label + ": its byteorder record says " + printable(*order, 20) +
              ", neither little nor big");
}

StorageBytes storage_record(const ZipArchive& zip, const std::string& top,
                            const SavedTensor& tensor, bool big_endian, InputFilePtr& keep,
                            const std::string& label, const std::string& where) {
  const std::string name = top + "data/" + tensor.storage_key;
  const auto index = zip.find(name);
  if (!index)
    throw Error(label + ": " + where + ": its storage record " + printable(name, 200) +
                " is missing");
  if (const auto problem = storage_problem(printable(name, 200), *tensor.dtype,
                                           tensor.storage_numel, zip.entries()[*index].size))
    throw Error(label + ": " + where + ": " + *problem);
  return member_bytes(zip, *index, big_endian, keep);
}

StorageBytes TorchSaveZip::storage(const SavedTensor& tensor, const std::string& where) const {
  // a deflated record (torch.save stores every record; another zip tool may have deflated
  // them) is inflated once, however many tensors view it
  return storage_record(zip_, top_, tensor, big_endian_, inflated_[tensor.storage_key], label_,
                        where);
}

}  // namespace vin::diagnostics
