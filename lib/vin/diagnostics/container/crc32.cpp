#include "vin/diagnostics/container/crc32.h"

#include <zlib.h>

#include <algorithm>
#include <cstdio>
#include <vector>

#include "vin/diagnostics/records/error.h"

namespace vin::diagnostics {

std::string crc32_text(std::uint32_t crc) {
  char hex[9];
  std::snprintf(hex, sizeof hex, "%08x", static_cast<unsigned>(crc));
  return hex;
}

std::uint32_t crc32_of_range(const InputFile& file, std::uint64_t begin, std::uint64_t end) {
  constexpr std::size_t kPiece = std::size_t{1} << 20;
  std::vector<unsigned char> piece(
      static_cast<std::size_t>(std::min<std::uint64_t>(kPiece, end - begin)));
  uLong crc = crc32(0L, Z_NULL, 0);
  for (std::uint64_t at = begin; at < end;) {
    const std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(piece.size(), end - at));
    if (file.read_at(at, piece.data(), n) != n)
      throw Error(file.path() + ": ends before byte " + std::to_string(end) +
                  " (cut short while read)");
    crc = crc32(crc, piece.data(), static_cast<uInt>(n));
    at += n;
  }
  return static_cast<std::uint32_t>(crc);
}

}  // namespace vin::diagnostics
