// torch.save's tar format (PyTorch 0.1 to 0.3): a tar (tar_archive.h) of four members.
// `sys_info`: a pickle of the saving machine's byte order and type sizes. `storages`: their
// count, then for each a pickle of (key, location, storage type), an 8-byte element count and the
// elements, then a pickle of the storage views [(key, root key, offset, elements)]. `tensors`:
// their count, then for each a pickle of (key, storage key, tensor type) and its metadata (the
// number of dimensions in 8 bytes, the sizes, the strides and the offset, 8 bytes each).
// `pickle`: the value, each tensor in it a persistent id, the string of its key. Read as data
// like the later formats (torch_save_file.h): every storage's place found and checked, the
// tensors described before the value is read, nothing extracted, nothing called.
#pragma once

#include <string>
#include <unordered_map>

#include "vin/diagnostics/container/input_file.h"
#include "vin/diagnostics/torch_save/torch_save_file.h"

namespace vin::diagnostics {

class TorchSaveTar : public TorchSaveSource {
 public:
  /// Reads the members of `file`. Throws Error naming the file and the member: not a tar, a
  /// member missing or there twice, a pickle damaged or past the reader, a storage of an unknown
  /// type or longer than its member, a view past its storage, a tensor whose storage is not
  /// there or cannot hold it.
  explicit TorchSaveTar(InputFilePtr file);

  PickleRef root() const override { return value_.root; }
  const std::string& label() const override { return file_->path(); }
  StorageBytes storage(const SavedTensor& tensor, const std::string& where) const override;

 private:
  /// A storage, or a view of one (a storage in its own right to the tensors on it, as torch
  /// rebuilds it: a slice of its root).
  struct Storage {
    std::string type;  ///< "torch.FloatStorage"
    std::string location;
    const Dtype* dtype = nullptr;
    std::uint64_t begin = 0;  ///< where its elements lie in the file
    std::int64_t numel = 0;
  };

  std::uint64_t read_integer(std::uint64_t at, int width, const std::string& failure,
                             const std::string& what) const;
  void read_storages(std::uint64_t begin, std::uint64_t end);
  PersistentTensors read_tensors(std::uint64_t begin, std::uint64_t end) const;

  InputFilePtr file_;
  bool big_endian_ = false;
  PickleDocument value_;
  std::unordered_map<std::string, Storage> storages_;  ///< storages and views, by key
};

}  // namespace vin::diagnostics
