#include "vin/diagnostics/container/zip_directory.h"

#include <algorithm>
#include <array>
#include <numeric>
#include <optional>

#include "vin/diagnostics/records/error.h"
#include "vin/diagnostics/text/printable.h"

namespace vin::diagnostics {
namespace {

// Record sizes and signatures of the zip format (PKWARE's APPNOTE.TXT, 4.3)
constexpr std::size_t kEndRecordBytes = 22;       // end of central directory record
constexpr std::size_t kZip64LocatorBytes = 20;    // Zip64 end of central directory locator
constexpr std::size_t kZip64EndRecordBytes = 56;  // Zip64 end of central directory record
constexpr std::size_t kCentralHeaderBytes = 46;
constexpr std::size_t kLocalHeaderBytes = 30;
constexpr std::size_t kMaxCommentBytes = 0xFFFF;
constexpr std::uint32_t kEndRecordSignature = 0x06054b50;
constexpr std::uint32_t kZip64LocatorSignature = 0x07064b50;
constexpr std::uint32_t kZip64EndRecordSignature = 0x06064b50;
constexpr std::uint32_t kCentralHeaderSignature = 0x02014b50;
constexpr std::uint32_t kLocalHeaderSignature = 0x04034b50;
constexpr std::uint32_t kDataDescriptorSignature = 0x08074b50;
constexpr std::uint16_t kZip64ExtraField = 0x0001;
constexpr std::uint16_t kEncryptedFlag = 0x0001;
constexpr std::uint16_t kDataDescriptorFlag = 0x0008;
constexpr std::uint32_t kSaturated32 = 0xFFFFFFFF;  // "see the Zip64 extra field"
constexpr std::uint16_t kSaturated16 = 0xFFFF;

std::uint64_t little_endian(std::string_view bytes, std::size_t at, std::size_t width) {
  std::uint64_t value = 0;
  for (std::size_t i = width; i-- > 0;)
    value = (value << 8) | static_cast<unsigned char>(bytes[at + i]);
  return value;
}
std::uint16_t u16(std::string_view b, std::size_t at) {
  return static_cast<std::uint16_t>(little_endian(b, at, 2));
}
std::uint32_t u32(std::string_view b, std::size_t at) {
  return static_cast<std::uint32_t>(little_endian(b, at, 4));
}
std::uint64_t u64(std::string_view b, std::size_t at) { return little_endian(b, at, 8); }

[[noreturn]] void damaged(const InputFile& file, const std::string& reason) {
  throw Error(file.path() + ": truncated or damaged zip archive (" + reason + ")");
}

// `a + b`, or nothing where it overflows 64 bits
std::optional<std::uint64_t> sum(std::uint64_t a, std::uint64_t b) {
  std::uint64_t out = 0;
  if (__builtin_add_overflow(a, b, &out)) return std::nullopt;
  return out;
}

// The `n` bytes at `offset` through `reader`, or an error saying `what` is cut short
std::string_view exactly(WindowedReader& reader, const InputFile& file, std::uint64_t offset,
                         std::size_t n, const std::string& what) {
  const std::string_view bytes = reader.at(offset, n);
  if (bytes.size() != n) damaged(file, what + " is cut short");
  return bytes;
}

// The 64-bit values of a Zip64 extra field among `extra` (a header's extra fields), one for
// each of `wanted` in order; nothing when there is no such field or it is too short.
std::optional<std::vector<std::uint64_t>> zip64_values(std::string_view extra, std::size_t wanted) {
  std::size_t at = 0;
  while (at + 4 <= extra.size()) {
    const std::uint16_t id = u16(extra, at);
    const std::size_t length = u16(extra, at + 2);
    if (at + 4 + length > extra.size()) return std::nullopt;
    if (id == kZip64ExtraField) {
      if (length < 8 * wanted) return std::nullopt;
      std::vector<std::uint64_t> values;
      for (std::size_t i = 0; i < wanted; ++i) values.push_back(u64(extra, at + 4 + 8 * i));
      return values;
    }
    at += 4 + length;
  }
  return std::nullopt;
}

struct EndRecord {
  std::uint64_t entries = 0;
  std::uint64_t directory_size = 0;
  std::uint64_t directory_offset = 0;
  std::uint64_t position = 0;  // where the record (or its Zip64 record) starts
};

// The end of central directory record, searched from the file's end through the comment's
// longest reach; with its Zip64 record where a locator precedes it.
EndRecord read_end_record(const InputFile& file, WindowedReader& reader) {
  const std::uint64_t size = file.size();
  if (size < kEndRecordBytes) damaged(file, "its directory at the end is missing");
  const std::uint64_t reach = std::min<std::uint64_t>(size, kEndRecordBytes + kMaxCommentBytes);
  const std::uint64_t tail_start = size - reach;
  std::string tail(static_cast<std::size_t>(reach), '\0');  // more than one window
  if (file.read_at(tail_start, tail.data(), tail.size()) != tail.size())
    damaged(file, "the file is shorter than it was");
  for (std::size_t at = tail.size() - kEndRecordBytes + 1; at-- > 0;) {
    if (u32(tail, at) != kEndRecordSignature) continue;
    const std::uint64_t position = tail_start + at;
    EndRecord end{u16(tail, at + 10), u32(tail, at + 12), u32(tail, at + 16), position};
    const bool multi_disk =
        u16(tail, at + 4) != 0 || u16(tail, at + 6) != 0 || u16(tail, at + 8) != u16(tail, at + 10);
    if (position >= kZip64LocatorBytes) {
      const std::string_view locator = exactly(reader, file, position - kZip64LocatorBytes,
                                               kZip64LocatorBytes, "the Zip64 locator");
      if (u32(locator, 0) == kZip64LocatorSignature) {
        const std::uint64_t record_at = u64(locator, 8);
        if (u32(locator, 4) != 0 || u32(locator, 16) > 1)
          damaged(file, "a multi-disk archive, which no PyTorch writer makes");
        if (record_at > position - kZip64LocatorBytes)
          damaged(file, "its Zip64 directory record lies outside the archive");
        const std::string_view record =
            exactly(reader, file, record_at, kZip64EndRecordBytes, "the Zip64 directory record");
        if (u32(record, 0) != kZip64EndRecordSignature)
          damaged(file, "its Zip64 locator points at no Zip64 directory record");
        if (u32(record, 16) != 0 || u32(record, 20) != 0 || u64(record, 24) != u64(record, 32))
          damaged(file, "a multi-disk archive, which no PyTorch writer makes");
        const EndRecord wide{u64(record, 32), u64(record, 40), u64(record, 48), record_at};
        // a field the short record can hold must say there what the Zip64 record says
        if ((end.entries != kSaturated16 && end.entries != wide.entries) ||
            (end.directory_size != kSaturated32 && end.directory_size != wide.directory_size) ||
            (end.directory_offset != kSaturated32 && end.directory_offset != wide.directory_offset))
          damaged(file, "its end record and its Zip64 end record disagree");
        return wide;
      }
    }
    if (multi_disk) damaged(file, "a multi-disk archive, which no PyTorch writer makes");
    return end;
  }
  damaged(file, "its directory at the end is missing");
}

}  // namespace

ZipDirectory read_zip_directory(const InputFile& file) {
  WindowedReader reader(file);
  const EndRecord end = read_end_record(file, reader);
  const auto directory_end = sum(end.directory_offset, end.directory_size);
  if (!directory_end || *directory_end > end.position)
    damaged(file, "its directory lies outside the archive");
  if (end.entries > end.directory_size / kCentralHeaderBytes)
    damaged(file, "its directory records " + std::to_string(end.entries) +
                      " members, more than its " + std::to_string(end.directory_size) +
                      " bytes can hold");
  ZipDirectory directory;
  directory.offset = end.directory_offset;
  directory.entries.reserve(static_cast<std::size_t>(end.entries));
  std::uint64_t at = end.directory_offset;
  for (std::uint64_t i = 0; i < end.entries; ++i) {
    const std::string what = "its directory entry " + std::to_string(i);
    if (at + kCentralHeaderBytes > *directory_end) damaged(file, what + " is cut short");
    const std::string header(exactly(reader, file, at, kCentralHeaderBytes, what));
    if (u32(header, 0) != kCentralHeaderSignature) damaged(file, what + " is not one");
    const std::size_t name_bytes = u16(header, 28), extra_bytes = u16(header, 30);
    const std::size_t comment_bytes = u16(header, 32);
    const std::uint64_t next = at + kCentralHeaderBytes + name_bytes + extra_bytes + comment_bytes;
    if (next > *directory_end) damaged(file, what + " is cut short");
    ZipDirectoryEntry entry;
    entry.flags = u16(header, 8);
    entry.method = u16(header, 10);
    entry.crc = u32(header, 16);
    entry.compressed_size = u32(header, 20);
    entry.size = u32(header, 24);
    entry.local_offset = u32(header, 42);
    entry.name = std::string(exactly(reader, file, at + kCentralHeaderBytes, name_bytes, what));
    // Zip64: the saturated fields' values follow in the extra field, in this order
    const std::array<std::uint64_t*, 3> wide = {&entry.size, &entry.compressed_size,
                                                &entry.local_offset};
    const std::size_t saturated = static_cast<std::size_t>(
        std::count_if(wide.begin(), wide.end(), [](const auto* v) { return *v == kSaturated32; }));
    if (saturated > 0 || u16(header, 34) == kSaturated16) {
      const std::string extra(
          exactly(reader, file, at + kCentralHeaderBytes + name_bytes, extra_bytes, what));
      const auto values = zip64_values(extra, saturated);
      if (!values) damaged(file, what + " lacks the Zip64 sizes it refers to");
      std::size_t next_value = 0;
      for (auto* field : wide)
        if (*field == kSaturated32) *field = (*values)[next_value++];
    }
    directory.entries.push_back(std::move(entry));
    at = next;
  }
  return directory;
}

std::vector<std::uint64_t> check_zip_members(const InputFile& file, const ZipDirectory& directory) {
  WindowedReader reader(file);
  const auto& entries = directory.entries;
  std::vector<std::uint64_t> data_begins(entries.size());
  // in the order they lie in the file, so that each member's end can be compared with the
  // next one's start (and the local headers are read front to back through the window)
  std::vector<std::size_t> order(entries.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return entries[a].local_offset < entries[b].local_offset;
  });
  std::uint64_t previous_end = 0;
  std::string previous_name;
  for (const std::size_t index : order) {
    const ZipDirectoryEntry& entry = entries[index];
    const std::string member = "the member " + printable(entry.name, 200);
    const auto fail = [&](const std::string& problem) { damaged(file, member + ": " + problem); };
    if (entry.local_offset < previous_end)
      fail("its data overlaps that of " + printable(previous_name, 200));
    if (entry.local_offset > directory.offset ||
        directory.offset - entry.local_offset < kLocalHeaderBytes)
      fail("its local header lies outside the archive's members");
    const std::string header(
        exactly(reader, file, entry.local_offset, kLocalHeaderBytes, member + "'s local header"));
    if (u32(header, 0) != kLocalHeaderSignature) fail("no local header where the directory says");
    const std::uint16_t flags = u16(header, 6);
    if ((flags | entry.flags) & kEncryptedFlag)
      fail("it is encrypted, which torch.save, torch.jit.save and numpy never do");
    if (u16(header, 8) != entry.method)
      fail("its local header and the directory name different compression methods");
    const std::size_t name_bytes = u16(header, 26), extra_bytes = u16(header, 28);
    const std::uint64_t name_at = entry.local_offset + kLocalHeaderBytes;
    if (exactly(reader, file, name_at, name_bytes, member + "'s local header") != entry.name)
      fail("its local header names another member");
    std::uint64_t size = u32(header, 22), compressed_size = u32(header, 18);
    const std::uint32_t crc = u32(header, 14);
    const std::size_t saturated = (size == kSaturated32) + (compressed_size == kSaturated32);
    if (saturated > 0) {
      const std::string extra(
          exactly(reader, file, name_at + name_bytes, extra_bytes, member + "'s local header"));
      const auto values = zip64_values(extra, saturated);
      if (!values) fail("its local header lacks the Zip64 sizes it refers to");
      std::size_t next_value = 0;
      if (size == kSaturated32) size = (*values)[next_value++];
      if (compressed_size == kSaturated32) compressed_size = (*values)[next_value++];
    }
    // with a data descriptor the local header may leave each of them zero (PyTorch's writer
    // does); any it gives must agree
    const bool descriptor = (flags & kDataDescriptorFlag) != 0;
    const auto agrees = [&](std::uint64_t local, std::uint64_t central) {
      return local == central || (descriptor && local == 0);
    };
    if (!agrees(crc, entry.crc)) fail("its local header and the directory give different CRCs");
    if (!agrees(size, entry.size) || !agrees(compressed_size, entry.compressed_size))
      fail("its local header and the directory give different sizes");
    data_begins[index] = name_at + name_bytes + extra_bytes;
    const auto data_end = sum(data_begins[index], entry.compressed_size);
    if (!data_end || *data_end > directory.offset) fail("its data runs past the archive's members");
    std::uint64_t end = *data_end;
    if (descriptor) {  // its CRC and sizes after the data, with or without a signature, the
                       // sizes 4 bytes wide or (Zip64) 8
      const std::string_view after = reader.at(
          end, static_cast<std::size_t>(std::min<std::uint64_t>(24, directory.offset - end)));
      std::size_t length = 0;
      for (const std::size_t start : {std::size_t{4}, std::size_t{0}}) {
        if (start == 4 && (after.size() < 4 || u32(after, 0) != kDataDescriptorSignature)) continue;
        for (const std::size_t width : {std::size_t{4}, std::size_t{8}}) {
          if (length != 0 || after.size() < start + 4 + 2 * width) continue;
          if (u32(after, start) == entry.crc &&
              little_endian(after, start + 4, width) == entry.compressed_size &&
              little_endian(after, start + 4 + width, width) == entry.size)
            length = start + 4 + 2 * width;
        }
      }
      if (length == 0) fail("its data descriptor is missing or disagrees with the directory");
      end += length;
    }
    previous_end = end;
    previous_name = entry.name;
  }
  return data_begins;
}

}  // namespace vin::diagnostics
