// A zip's layout as the format writes it, read by hand: the central directory (with its Zip64
// records) and each member's local header. libzip reads the members' data; it exposes no member's
// offset, and its own consistency check (ZIP_CHECKCONS) differs between versions: 1.12 refuses
// every archive PyTorch writes (a data descriptor after a member whose local header carries an
// extra field the directory does not repeat), which is valid zip. This is the project's check,
// the same under every libzip: what the directory and the local headers say of a member must
// agree (name, compression, sizes and CRC, a data descriptor's too), and every member must lie
// inside the archive, before its directory, overlapping no other (docs/inputs.md, Zip archives).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "vin/diagnostics/container/input_file.h"

namespace vin::diagnostics {

/// One member as the central directory records it.
struct ZipDirectoryEntry {
  std::string name;  ///< the bytes of its name, as written
  std::uint16_t flags = 0;
  std::uint16_t method = 0;
  std::uint32_t crc = 0;
  std::uint64_t compressed_size = 0;
  std::uint64_t size = 0;
  std::uint64_t local_offset = 0;  ///< where its local header starts
};

struct ZipDirectory {
  std::uint64_t offset = 0;  ///< where the central directory starts
  std::vector<ZipDirectoryEntry> entries;
};

/// The central directory of the zip in `file`, in its order. Throws Error naming the file when
/// it cannot be found or read ("PATH: truncated or damaged zip archive (REASON)").
ZipDirectory read_zip_directory(const InputFile& file);

/// Checks each member's local header and data against `directory`: the header where the
/// directory says, with the same name and compression; the same CRC and sizes, or zeros where
/// the member has a data descriptor, which must then say what the directory says; the member
/// inside the archive, before the directory, overlapping no other; not encrypted. Throws Error
/// naming the file and the member. Returns where each member's data begins (after its local
/// header), in the directory's order: a stored member's bytes are read there directly.
std::vector<std::uint64_t> check_zip_members(const InputFile& file, const ZipDirectory& directory);

}  // namespace vin::diagnostics
