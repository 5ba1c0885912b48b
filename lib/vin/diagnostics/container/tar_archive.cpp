#include "vin/diagnostics/container/tar_archive.h"

#include <algorithm>
#include <cstring>
#include <string_view>

namespace vin::diagnostics {
namespace {

constexpr std::uint64_t kBlock = 512;
// a pax header or GNU long name is a few records; more is not a tar Python or GNU tar wrote
constexpr std::uint64_t kMaxExtendedHeader = std::uint64_t{1} << 20;

// A numeric field: octal digits, NUL- or space-terminated (leading spaces allowed), or GNU's
// base-256 (the first byte's high bit set) for sizes of 8 GiB and more; nothing if malformed.
std::optional<std::uint64_t> number_field(const char* field, std::size_t width) {
  const auto* bytes = reinterpret_cast<const unsigned char*>(field);
  if (bytes[0] & 0x80) {
    if (bytes[0] != 0x80) return std::nullopt;  // negative, or a size past 2^63 by the top byte
    std::uint64_t v = 0;
    for (std::size_t i = 1; i < width; ++i) {
      if (v >> 56) return std::nullopt;
      v = (v << 8) | bytes[i];
    }
    return v;
  }
  std::size_t i = 0;
  while (i < width && field[i] == ' ') ++i;
  std::uint64_t v = 0;
  bool digits = false;
  for (; i < width && field[i] >= '0' && field[i] <= '7'; ++i, digits = true) {
    if (v >> 60) return std::nullopt;
    v = v * 8 + static_cast<std::uint64_t>(field[i] - '0');
  }
  if (i < width && field[i] != '\0' && field[i] != ' ') return std::nullopt;
  return digits ? std::optional<std::uint64_t>(v) : std::optional<std::uint64_t>(0);
}

// Whether `header` is a ustar header (POSIX "ustar\0" or GNU "ustar ") whose checksum matches:
// the bytes summed with the checksum field as spaces, unsigned (or signed, as old tars did).
bool is_tar_header(const char* header) {
  if (std::memcmp(header + 257, "ustar", 5) != 0 || (header[262] != '\0' && header[262] != ' '))
    return false;
  const auto recorded = number_field(header + 148, 8);
  if (!recorded) return false;
  std::uint64_t unsigned_sum = 0;
  std::int64_t signed_sum = 0;
  for (std::size_t i = 0; i < kBlock; ++i) {
    const char c = i >= 148 && i < 156 ? ' ' : header[i];
    unsigned_sum += static_cast<unsigned char>(c);
    signed_sum += static_cast<signed char>(c);
  }
  return *recorded == unsigned_sum || static_cast<std::int64_t>(*recorded) == signed_sum;
}

std::string text_field(const char* field, std::size_t width) {
  return std::string(field, strnlen(field, width));
}

// What a pax extended header or a GNU long name sets for the next member.
struct NextMember {
  std::optional<std::string> path;
  bool has_size = false;
  std::uint64_t size = 0;
};

// The `path` and `size` a pax extended header sets for the next member ("LEN key=value\n"
// records); false when a record is malformed.
bool read_pax(std::string_view records, NextMember& next) {
  while (!records.empty()) {
    std::size_t length = 0;
    std::size_t i = 0;
    for (; i < records.size() && records[i] >= '0' && records[i] <= '9' && i < 8; ++i)
      length = length * 10 + static_cast<std::size_t>(records[i] - '0');
    if (i == 0 || i >= records.size() || records[i] != ' ' || length <= i + 1 ||
        length > records.size() || records[length - 1] != '\n')
      return false;
    const std::string_view record = records.substr(i + 1, length - i - 2);
    records.remove_prefix(length);
    const std::size_t eq = record.find('=');
    if (eq == std::string_view::npos) return false;
    const std::string_view key = record.substr(0, eq);
    const std::string_view value = record.substr(eq + 1);
    if (key == "path") {
      next.path = std::string(value);
    } else if (key == "size") {
      std::uint64_t v = 0;
      if (value.empty() || value.size() > 19) return false;
      for (const char c : value) {
        if (c < '0' || c > '9') return false;
        v = v * 10 + static_cast<std::uint64_t>(c - '0');
      }
      next.size = v;
      next.has_size = true;
    }
  }
  return true;
}

}  // namespace

std::optional<TarContents> read_tar(const InputFile& file, std::size_t most) {
  char header[kBlock];
  if (file.size() < kBlock || file.read_at(0, header, kBlock) != kBlock || !is_tar_header(header))
    return std::nullopt;
  TarContents out;
  const auto fail = [&](std::uint64_t at, const std::string& problem) {
    out.problem = "the header at byte " + std::to_string(at) + ": " + problem;
    return out;
  };
  NextMember next;  // from a pax header or a GNU long name
  std::uint64_t at = 0;
  for (std::size_t headers = 0;; ++headers) {
    if (at + kBlock > file.size()) {
      // the end-of-archive blocks are missing: where the data ends on a header boundary, what
      // came before is whole (tarfile itself accepts that)
      if (at == file.size() && !next.path && !next.has_size) return out;
      return fail(at, "cut short (the file ends at byte " + std::to_string(file.size()) + ")");
    }
    if (headers == most) {
      if (most < kMaxTarHeaders) return out;  // a look at the first few (the classifier)
      return fail(at, "more than " + std::to_string(most) + " members");
    }
    if (file.read_at(at, header, kBlock) != kBlock) return fail(at, "cannot be read");
    if (header[0] == '\0' && std::all_of(header, header + kBlock, [](char c) { return !c; }))
      return out;  // the end-of-archive block
    if (!is_tar_header(header)) return fail(at, "not a tar header (its magic or checksum)");
    const auto field_size = number_field(header + 124, 12);
    if (!field_size) return fail(at, "a size field that is not a number");
    const std::uint64_t size = next.has_size ? next.size : *field_size;
    const std::uint64_t begin = at + kBlock;
    if (size > file.size() - begin)
      return fail(at, "a member of " + std::to_string(size) + " bytes, more than the " +
                          std::to_string(file.size() - begin) + " left in the file");
    const char type = header[156];
    if (type == 'x' || type == 'L') {  // the next member's pax records, or its GNU long name
      if (size > kMaxExtendedHeader)
        return fail(at, "an extended header of " + std::to_string(size) + " bytes");
      std::string bytes(static_cast<std::size_t>(size), '\0');
      if (file.read_at(begin, bytes.data(), bytes.size()) != bytes.size())
        return fail(at, "cannot be read");
      if (type == 'L') {
        next.path = bytes.substr(0, strnlen(bytes.data(), bytes.size()));
      } else if (!read_pax(bytes, next)) {
        return fail(at, "a malformed pax extended header");
      }
    } else {
      if (type == '0' || type == '\0' || type == '7') {  // a regular (or contiguous) file
        std::string name = text_field(header, 100);
        const std::string prefix = text_field(header + 345, 155);
        if (!prefix.empty() && std::memcmp(header + 257, "ustar\0", 6) == 0)
          name = prefix + "/" + name;
        out.members.push_back({next.path ? *next.path : name, begin, size});
      }
      next = NextMember{};
    }
    at = begin + (size + kBlock - 1) / kBlock * kBlock;
  }
}

}  // namespace vin::diagnostics
