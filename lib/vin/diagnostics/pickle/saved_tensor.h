// A tensor as torch.save pickles it (a storage, an offset, sizes and strides) and the CRC-32 of
// its elements, read where its storage's bytes lie. Every torch.save reader (the zip format, the
// legacy format, a .pt2's nested state dicts) describes its tensors here, so that the same
// tensor gets the same record whichever container holds it (contract 11.2).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "vin/diagnostics/container/crc32.h"
#include "vin/diagnostics/container/input_file.h"
#include "vin/diagnostics/pickle/pickle_reader.h"
#include "vin/diagnostics/text/dtypes.h"

namespace vin::diagnostics {

/// Where a storage's bytes lie: `size` bytes of `file` from `begin` (a stored zip member, a
/// legacy file's raw storage), and their CRC-32 where the container records it (a zip member's).
struct StorageBytes {
  const InputFile* file = nullptr;
  std::uint64_t begin = 0;
  std::uint64_t size = 0;
  std::optional<std::uint32_t> crc;
  /// the storage was written big-endian (a zip's `byteorder` record says "big")
  bool big_endian = false;
};

/// The dtype a storage type global (`torch.FloatStorage`, `torch.QUInt8Storage`, ...) holds
/// (TorchScript's pickler names a storage type after LibTorch's scalar type), or nullptr for one
/// the dtype table does not know.
const Dtype* storage_dtype(std::string_view storage_type);

/// One tensor as its pickle describes it (_rebuild_tensor_v2, _rebuild_qtensor or
/// _rebuild_parameter of a storage reference).
struct SavedTensor {
  const Dtype* dtype = nullptr;
  std::string storage_key;         ///< the persistent id's key (its record's name under data/)
  std::int64_t storage_numel = 0;  ///< the elements of its storage
  std::optional<std::string> device;  ///< the storage's location ("cpu", "cuda:0")
  std::int64_t offset = 0;            ///< in elements of the storage
  std::vector<std::int64_t> shape;
  std::vector<std::int64_t> strides;
  std::int64_t numel = 0;
  bool requires_grad = false;
  bool parameter = false;  ///< an nn.Parameter (_rebuild_parameter)

  std::int64_t nbytes() const { return numel * dtype->element_size; }
  /// What tells two names of one tensor from two tensors: its storage, offset, shape and
  /// strides (views of one storage with different shapes are different tensors).
  std::string identity() const;
};

/// The tensor `value` (PickleValue::Kind::tensor) describes. The pickle reader has checked its
/// sizes and that it fits its storage. Throws Error naming `where` for a storage type without a
/// dtype this tool knows.
SavedTensor saved_tensor(PickleRef value, const std::string& where);

/// The bytes of its storage `tensor` reaches, from the storage's start (0 for no elements), or
/// nothing when its offset or a stride is negative or the sum overflows 64 bits.
std::optional<std::uint64_t> bytes_reached(const SavedTensor& tensor);

/// Contiguous strides for `shape` (row-major), as torch gives a tensor made from nothing else.
std::vector<std::int64_t> contiguous_strides(const std::vector<std::int64_t>& shape);

/// The CRC-32 of `tensor`'s elements in row-major order, little-endian (TensorMetadata's
/// data_crc32), from its storage's `bytes`, which must hold the storage's elements (the
/// caller checks: storage_problem), asked of `batch`: where the tensor is its whole storage,
/// contiguous, and the container records the storage's CRC, that CRC, read for free; where its
/// elements are one run of the storage, that byte range (checksummed in pieces on every core);
/// otherwise its elements gathered where they lie (the file mapped, never copied whole), bytes
/// swapped for a big-endian storage. `storage_crc`: the storage's CRC where the batch computes
/// it already (a legacy file's, which records none). `bytes.file` must stay open until the
/// batch has run.
Crc32Batch::Ticket add_elements_crc32(Crc32Batch& batch, const SavedTensor& tensor,
                                      const StorageBytes& bytes,
                                      std::optional<Crc32Batch::Ticket> storage_crc = std::nullopt);
/// The same, computed now (a batch of one).
std::uint32_t elements_crc32(const SavedTensor& tensor, const StorageBytes& bytes);

/// Why a storage of `numel` elements of `dtype` cannot lie in `size` bytes (it needs more), or
/// nothing. `what` names the storage in the message.
std::optional<std::string> storage_problem(const std::string& what, const Dtype& dtype,
                                           std::int64_t numel, std::uint64_t size);

}  // namespace vin::diagnostics
