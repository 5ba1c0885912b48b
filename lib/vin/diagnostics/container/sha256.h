// SHA-256 (FIPS 180-4) of bytes and of files: what a profile names its inputs file by, as
// `sha256sum` would print it. No library of the stack offers one (zlib's CRC-32 tells
// corruption, not identity).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>

#include "vin/diagnostics/container/input_file.h"

namespace vin::diagnostics {

class Sha256 {
 public:
  Sha256();
  void update(const void* bytes, std::size_t n);
  /// The digest's 32 bytes; the hash is finished (update no more).
  std::array<unsigned char, 32> digest();
  /// The digest as 64 lowercase hex digits; the hash is finished (update no more).
  std::string hex();

 private:
  void block(const unsigned char* p);
  std::array<std::uint32_t, 8> state_;
  unsigned char buffer_[64];
  std::size_t buffered_ = 0;
  std::uint64_t length_ = 0;  ///< bytes hashed
};

/// The SHA-256 of `file`'s bytes, read a piece at a time.
std::string sha256_of(const InputFile& file);

}  // namespace vin::diagnostics
