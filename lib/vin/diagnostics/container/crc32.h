// CRC-32 as the records give it (zlib's: a zip member's, storage_crc32 and data_crc32, contract
// 11.2): of a byte range of a file, and as 8 lowercase hex digits. One place for every CRC the
// tool computes over file bytes.
#pragma once

#include <cstdint>
#include <string>

#include "vin/diagnostics/container/input_file.h"

namespace vin::diagnostics {

/// A member's CRC-32 as the records write it (TensorMetadata's storage_crc32): 8 lowercase hex
/// digits.
std::string crc32_text(std::uint32_t crc);

/// The CRC-32 of the bytes [begin, end) of `file`, read a piece at a time (TensorMetadata's
/// data_crc32: a safetensors tensor's bytes are its elements, row-major and little-endian).
std::uint32_t crc32_of_range(const InputFile& file, std::uint64_t begin, std::uint64_t end);

}  // namespace vin::diagnostics
