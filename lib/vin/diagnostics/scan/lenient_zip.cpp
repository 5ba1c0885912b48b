#include "vin/diagnostics/scan/lenient_zip.h"

#include <zlib.h>

#include <algorithm>
#include <map>
#include <optional>
#include <set>

#include "vin/diagnostics/container/zip_directory.h"
#include "vin/diagnostics/records/error.h"
#include "vin/diagnostics/scan/pickle_scan.h"

namespace vin::diagnostics {
namespace {

constexpr std::size_t kLocalHeaderBytes = 30;
constexpr std::string_view kLocalHeaderSignature{"PK\x03\x04", 4};
constexpr std::uint16_t kDataDescriptorFlag = 0x0008;
constexpr std::uint16_t kStored = 0, kDeflated = 8;
constexpr std::uint32_t kSaturated32 = 0xFFFFFFFF;
constexpr std::size_t kChunk = 1 << 16;

std::uint64_t little_endian(std::string_view bytes, std::size_t at, std::size_t width) {
  std::uint64_t value = 0;
  for (std::size_t i = width; i-- > 0;) value = (value << 8) | static_cast<unsigned char>(bytes[at + i]);
  return value;
}

bool ends_with_py(std::string_view name) {
  return name.size() >= 3 && name.substr(name.size() - 3) == ".py";
}

// A local header as it is written
struct LocalHeader {
  std::uint16_t flags = 0, method = 0;
  std::uint64_t compressed = 0;  // as declared (Zip64's where saturated); 0 with a descriptor
  std::string name;
  std::uint64_t data_at = 0;
};

std::optional<LocalHeader> local_header(const InputFile& file, std::uint64_t at) {
  std::string fixed(kLocalHeaderBytes, '\0');
  if (file.read_at(at, fixed.data(), fixed.size()) != fixed.size() ||
      fixed.compare(0, 4, kLocalHeaderSignature) != 0)
    return std::nullopt;
  LocalHeader h;
  h.flags = static_cast<std::uint16_t>(little_endian(fixed, 6, 2));
  h.method = static_cast<std::uint16_t>(little_endian(fixed, 8, 2));
  h.compressed = little_endian(fixed, 18, 4);
  const std::size_t name_bytes = little_endian(fixed, 26, 2), extra_bytes = little_endian(fixed, 28, 2);
  std::string rest(name_bytes + extra_bytes, '\0');
  if (file.read_at(at + kLocalHeaderBytes, rest.data(), rest.size()) != rest.size()) return std::nullopt;
  h.name = rest.substr(0, name_bytes);
  const std::string_view extra = std::string_view(rest).substr(name_bytes);
  if (h.compressed == kSaturated32) {  // Zip64: the sizes are in its extra field (size, compressed)
    for (std::size_t p = 0; p + 4 <= extra.size();) {
      const auto id = little_endian(extra, p, 2), length = little_endian(extra, p + 2, 2);
      if (id == 1 && length >= 16 && p + 4 + 16 <= extra.size()) h.compressed = little_endian(extra, p + 12, 8);
      p += 4 + length;
    }
  }
  h.data_at = at + kLocalHeaderBytes + rest.size();
  return h;
}

// A member's data from `h.data_at`: stored bytes (`compressed` of them) or inflated ones, at
// most `most` bytes; `consumed` is set to the compressed bytes read (for the walk to go on)
std::string member_data(const InputFile& file, const LocalHeader& h, std::uint64_t compressed,
                        std::uint64_t most, std::uint64_t& consumed) {
  std::string out;
  consumed = 0;
  if (h.method == kStored) {  // never more than the file holds after the header
    const std::uint64_t n = std::min({compressed, most, file.size() - std::min(file.size(), h.data_at)});
    out.resize(static_cast<std::size_t>(n));
    out.resize(file.read_at(h.data_at, out.data(), out.size()));
    consumed = compressed;
    return out;
  }
  if (h.method != kDeflated) return out;  // an unknown method: nothing a loader reads
  z_stream z{};
  if (inflateInit2(&z, -MAX_WBITS) != Z_OK) return out;
  std::string in(kChunk, '\0'), piece(kChunk, '\0');
  // with a data descriptor the compressed size may be unknown: inflate to the stream's end
  const std::uint64_t limit = compressed > 0 ? compressed : file.size() - std::min(file.size(), h.data_at);
  int status = Z_OK;
  while (status == Z_OK && consumed < limit && out.size() < most) {
    const std::size_t want = static_cast<std::size_t>(std::min<std::uint64_t>(kChunk, limit - consumed));
    const std::size_t got = file.read_at(h.data_at + consumed, in.data(), want);
    if (got == 0) break;
    z.next_in = reinterpret_cast<Bytef*>(in.data());
    z.avail_in = static_cast<uInt>(got);
    while (z.avail_in > 0 && status == Z_OK && out.size() < most) {
      z.next_out = reinterpret_cast<Bytef*>(piece.data());
      z.avail_out = static_cast<uInt>(piece.size());
      status = inflate(&z, Z_NO_FLUSH);
      const std::size_t n = static_cast<std::size_t>(
          std::min<std::uint64_t>(piece.size() - z.avail_out, most - out.size()));
      if (out.size() + n > out.capacity())  // grown to `most` at most, never twice past it
        out.reserve(static_cast<std::size_t>(std::min<std::uint64_t>(most, std::max(2 * out.capacity(), out.size() + n))));
      out.append(piece.data(), n);
      if (status == Z_BUF_ERROR) status = Z_OK;  // wants more input
      if (z.avail_out == piece.size() && z.avail_in > 0 && status == Z_OK) break;  // no progress
    }
    consumed += got - z.avail_in;
  }
  inflateEnd(&z);
  if (out.size() > most) out.resize(static_cast<std::size_t>(most));
  return out;
}

}  // namespace

std::vector<LenientMember> read_zip_leniently(const InputFile& file, LenientZipLimits limits) {
  // the central directory's members where it can be read, and every local header the walk from
  // the start of the file finds (a loader that reads local headers sees those)
  std::map<std::uint64_t, std::uint64_t> directory_compressed;  // by local header offset
  std::map<std::uint64_t, std::string> directory_name;          // the directory's name for it
  try {
    for (const ZipDirectoryEntry& e : read_zip_directory(file).entries) {
      if (directory_compressed.size() >= limits.max_members) break;
      directory_compressed[e.local_offset] = e.compressed_size;
      directory_name[e.local_offset] = e.name;
    }
  } catch (const Error&) {  // no directory to read: the local headers alone
  }
  std::vector<LenientMember> out;
  std::set<std::uint64_t> taken;
  std::uint64_t kept = 0, inflated = 0;
  // a member's data, counted against the budget of bytes inflated in all (nothing past it)
  const auto data = [&](const LocalHeader& h, std::uint64_t compressed, std::uint64_t most,
                        std::uint64_t& consumed) {
    if (inflated >= limits.max_inflated_bytes) {
      consumed = 0;
      return std::string();
    }
    std::string bytes = member_data(file, h, compressed, std::min(most, limits.max_inflated_bytes - inflated), consumed);
    inflated += bytes.size();
    return bytes;
  };
  // member at `at`: kept where a loader could unpickle it; returns where its data ends
  // (nothing where that cannot be told: stored bytes of unknown size)
  const auto take = [&](std::uint64_t at, const LocalHeader& h) -> std::optional<std::uint64_t> {
    std::uint64_t compressed = h.compressed;
    const bool descriptor = (h.flags & kDataDescriptorFlag) != 0;
    if (compressed == 0 && descriptor) {
      const auto d = directory_compressed.find(at);
      if (d != directory_compressed.end()) compressed = d->second;
    }
    std::uint64_t consumed = 0;
    // a loader may go by either name: miniz by the directory's, a walk by the local header's
    const auto other = directory_name.find(at);
    const std::string& named_there = other != directory_name.end() ? other->second : h.name;
    const bool named = pickle_name(h.name) || pickle_name(named_there);
    const bool source = ends_with_py(h.name) || ends_with_py(named_there);
    if (taken.insert(at).second) {
      LenientMember m{named_there, at, {}, named, false};
      if (kept < limits.max_total_bytes &&
          (named || source || starts_with_proto(data(h, compressed, 2, consumed)))) {
        m.bytes = data(h, compressed, std::min(limits.max_member_bytes, limits.max_total_bytes - kept), consumed);
        m.read = true;
        kept += m.bytes.size();
      }
      out.push_back(std::move(m));
    }
    if (compressed > 0 || !descriptor) return h.data_at + compressed;
    if (h.method != kDeflated) return std::nullopt;
    data(h, 0, limits.max_member_bytes, consumed);  // inflated to find its end
    if (consumed == 0) return std::nullopt;  // the budget is spent
    return h.data_at + consumed;
  };
  std::uint64_t at = 0;
  for (std::size_t n = 0; n < limits.max_members && at < file.size(); ++n) {
    const std::optional<LocalHeader> h = local_header(file, at);
    if (!h) break;
    const std::optional<std::uint64_t> end = take(at, *h);
    if (!end) break;
    at = *end;
    if (!(h->flags & kDataDescriptorFlag)) continue;
    // a data descriptor: an optional signature, the CRC and two sizes of 4 or 8 bytes
    std::string probe(4, '\0');
    if (file.read_at(at, probe.data(), 4) == 4 && probe == std::string("PK\x07\x08", 4)) at += 4;
    bool found = false;
    for (const std::uint64_t skip : {12, 20}) {
      if (file.read_at(at + skip, probe.data(), 4) == 4 && probe.compare(0, 4, kLocalHeaderSignature) == 0) {
        at += skip;
        found = true;
        break;
      }
    }
    if (!found) break;
  }
  for (const auto& [offset, compressed] : directory_compressed)  // those the walk did not reach
    if (!taken.count(offset))
      if (const std::optional<LocalHeader> h = local_header(file, offset)) take(offset, *h);
  return out;
}

}  // namespace vin::diagnostics
