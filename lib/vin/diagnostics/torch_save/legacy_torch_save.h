// torch.save's legacy format (PyTorch 0.4 to 1.5, and `_use_new_zipfile_serialization=False`
// since): five pickles one after the other (the magic number, the protocol version, the
// saving machine's byte order and type sizes, the value, the sorted storage keys), then each
// storage raw in the keys' order, an 8-byte element count before its bytes. Read as data like the
// zip format (torch_save_file.h): the pickles by the restricted reader, each storage's place
// found by walking the counts, never more than a pickle's bytes in memory.
#pragma once

#include <string>
#include <unordered_map>

#include "vin/diagnostics/container/input_file.h"
#include "vin/diagnostics/torch_save/torch_save_file.h"

namespace vin::diagnostics {

class LegacyTorchSave : public TorchSaveSource {
 public:
  /// Reads the pickles and the storages' places of `file`. Throws Error naming the file: not
  /// the legacy format (magic number, protocol 1001), a pickle damaged or past the reader, a
  /// storage key listed twice or no tensor refers to, a count the file's bytes cannot hold.
  explicit LegacyTorchSave(InputFilePtr file);

  PickleRef root() const override { return value_.root; }
  const std::string& label() const override { return file_->path(); }
  StorageBytes storage(const SavedTensor& tensor, const std::string& where) const override;

 private:
  PickleDocument pickle_at(std::uint64_t& offset, const char* what);

  InputFilePtr file_;
  bool big_endian_ = false;
  PickleDocument value_;
  struct Place {
    std::uint64_t begin = 0;
    std::uint64_t size = 0;
  };
  std::unordered_map<std::string, Place> storages_;
};

}  // namespace vin::diagnostics
