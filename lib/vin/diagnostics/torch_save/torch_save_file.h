// torch.save's zip format (PyTorch 1.6 on) read as data: TOP/data.pkl by the restricted pickle
// reader (values built, nothing called), each storage a record TOP/data/KEY. The one reader of
// such files without LibTorch: weights files (weights_file.h) and the state dicts a .pt2 nests
// (export_archive.h) read their tensors through it.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <unordered_map>

#include "vin/diagnostics/pickle/pickle_reader.h"
#include "vin/diagnostics/pickle/saved_tensor.h"
#include "vin/diagnostics/container/zip_archive.h"

namespace vin::diagnostics {

/// Where member `index` of `zip` lies, to read a storage's elements from: in place where it is
/// stored (as PyTorch's writers store every record), else inflated once into a file of its own
/// that `keep` holds (never into memory whole). `big_endian`: the storage's byte order.
StorageBytes member_bytes(const ZipArchive& zip, std::size_t index, bool big_endian,
                          InputFilePtr& keep);

/// Whether the storages of the zip PyTorch wrote are big-endian: its TOP/byteorder record (since
/// PyTorch 2.1) says "big"; without one they are little-endian (the machine's, and PyTorch ran
/// on no big-endian machine before). Throws Error naming `label` for another value.
bool big_endian_storages(const ZipArchive& zip, const std::string& top, const std::string& label);

/// Where `tensor`'s storage lies in a zip PyTorch wrote (torch.save's, torch.jit.save's): its
/// record TOP/data/KEY, which must exist and hold the storage's elements (Error naming `label`,
/// `where` and the record otherwise); `keep` holds a deflated record's copy (member_bytes).
StorageBytes storage_record(const ZipArchive& zip, const std::string& top,
                            const SavedTensor& tensor, bool big_endian, InputFilePtr& keep,
                            const std::string& label, const std::string& where);

/// The pickle that starts at byte `offset` of `file` and ends before byte `end` (the legacy
/// format's pickles follow one another, the tar format's sit between raw storages): read
/// through a window that doubles from 64 KiB to 1 GiB (a pickle grows with a file's keys and
/// objects, never with its tensors' elements), scanned by pickle_problem before its values are
/// used; `offset` moved past its STOP. `persistent`: read_pickle's. Throws Error
/// "`failure`its `what` at byte N: problem" when it is missing, cut short, damaged or past
/// the reader.
PickleDocument pickle_in_file(const InputFile& file, std::uint64_t& offset, std::uint64_t end,
                              const std::string& failure, const std::string& what,
                              const PersistentTensors* persistent = nullptr);

/// The unsigned integer of `width` bytes (at most 8) at byte `at` of `file`, in the byte order
/// a torch.save file wrote it (a raw storage's element count, a tensor's metadata), or nothing
/// when the file ends first.
std::optional<std::uint64_t> saved_integer(const InputFile& file, std::uint64_t at, int width,
                                           bool big_endian);

/// A torch.save file read as data, whatever its format: the value it holds, and where each
/// tensor's storage lies. The weights reader (weights_file.h) and capture's inputs reader
/// (torch/torch_save_reader.h) take any of them.
class TorchSaveSource {
 public:
  virtual ~TorchSaveSource() = default;
  /// The value the file holds.
  virtual PickleRef root() const = 0;
  /// The file, or the file and the member, for messages.
  virtual const std::string& label() const = 0;
  /// Where `tensor`'s storage lies, checked to hold the storage's elements (Error naming the
  /// file, `where` and the storage otherwise).
  virtual StorageBytes storage(const SavedTensor& tensor, const std::string& where) const = 0;
};

class TorchSaveZip : public TorchSaveSource {
 public:
  /// Reads `zip`'s data.pkl (at most `max_pickle_bytes`), first scanned by pickle_problem.
  /// Throws Error naming `label` (the file, or the file and its member) when there is none or
  /// the pickle is damaged or outside what the reader builds.
  TorchSaveZip(const ZipArchive& zip, std::string label, std::uint64_t max_pickle_bytes);

  PickleRef root() const override { return document_.root; }
  const std::string& label() const override { return label_; }

  /// Where `tensor`'s storage lies: its record, which must exist and hold the storage's
  /// elements (Error naming the record otherwise), stored where it can be read in place or
  /// copied out of a deflated record once. `where` names the tensor in errors.
  StorageBytes storage(const SavedTensor& tensor, const std::string& where) const override;

 private:
  const ZipArchive& zip_;
  std::string label_;
  std::string top_;
  bool big_endian_ = false;
  PickleDocument document_;
  mutable std::unordered_map<std::string, InputFilePtr> inflated_;  // deflated records, by key
};

}  // namespace vin::diagnostics
