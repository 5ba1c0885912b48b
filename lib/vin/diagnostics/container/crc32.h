// CRC-32 as the records give it (zlib's: a zip member's, storage_crc32 and data_crc32, contract
// 11.2), and as 8 lowercase hex digits. The one place the tool computes a CRC: every CRC over
// bytes is libdeflate's (its carry-less-multiply paths run at memory speed, about 4x zlib's on
// this project's machine, docs/performance.md, with the same values), and the checksums of a
// file's many or large byte ranges are computed together on the machine's cores (Crc32Batch).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "vin/diagnostics/container/input_file.h"

namespace vin::diagnostics {

/// A member's CRC-32 as the records write it (TensorMetadata's storage_crc32): 8 lowercase hex
/// digits.
std::string crc32_text(std::uint32_t crc);

/// The CRC-32 of `n` more bytes after those `crc` was computed over (0 to start). Unlike zlib's,
/// no bytes (n == 0, any pointer) leave `crc` as it is.
std::uint32_t crc32_update(std::uint32_t crc, const void* bytes, std::size_t n);

/// The CRC-32 of bytes A then B, from A's CRC `first` and B's `second` of `second_size` bytes
/// (zlib's crc32_combine: arithmetic on the two values, no byte read again).
std::uint32_t crc32_join(std::uint32_t first, std::uint32_t second, std::uint64_t second_size);

/// Checksums gathered first and computed together: byte ranges of files (split into pieces of
/// kPieceBytes, each read into a small buffer of its worker's and joined in order) and
/// computations of a CRC of their own (a strided tensor's elements), spread over the cores the
/// process may run on (at most kMaxWorkers). Memory stays bounded whatever the sizes: each worker
/// holds one buffer of kBufferBytes. Each value is the same as computed alone, in order.
///
///   Crc32Batch batch;
///   const auto a = batch.range(file, begin, end);
///   batch.run();
///   use(batch.value(a));
class Crc32Batch {
 public:
  using Ticket = std::size_t;
  static constexpr std::uint64_t kPieceBytes = std::uint64_t{32} << 20;
  static constexpr std::size_t kBufferBytes = std::size_t{256} << 10;
  static constexpr unsigned kMaxWorkers = 8;

  /// The CRC-32 of bytes [begin, end) of `file`, which must stay open until run() returns.
  Ticket range(const InputFile& file, std::uint64_t begin, std::uint64_t end);
  /// A CRC known already (a zip member's): given back as it is.
  Ticket known(std::uint32_t crc);
  /// A CRC `compute` makes on a worker (it may run beside the others: it must only read).
  Ticket computed(std::function<std::uint32_t()> compute);

  /// Computes every CRC asked for. Throws the Error of the first range or computation that
  /// failed, in the order they were asked for (a file cut short: "PATH: ends before byte N").
  void run();
  /// The CRC of `ticket`, after run().
  std::uint32_t value(Ticket ticket) const { return values_.at(ticket); }

  /// How many workers run() uses for `pieces` pieces: one per core the process may run on
  /// (usable_cores), at most kMaxWorkers and `pieces`.
  static unsigned workers_for(std::size_t pieces);

 private:
  struct Piece {
    const InputFile* file = nullptr;  // a range's, or nullptr for computations_[begin]
    std::uint64_t begin = 0, end = 0;
    Ticket ticket = 0;
  };
  std::vector<Piece> pieces_;
  std::vector<std::function<std::uint32_t()>> computations_;
  std::vector<std::uint32_t> values_;  // by ticket
};

/// The CRC-32 of the bytes [begin, end) of `file` (TensorMetadata's data_crc32: a safetensors
/// tensor's bytes are its elements, row-major and little-endian): a batch of one range.
std::uint32_t crc32_of_range(const InputFile& file, std::uint64_t begin, std::uint64_t end);

}  // namespace vin::diagnostics
