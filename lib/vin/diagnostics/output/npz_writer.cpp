#include "vin/diagnostics/output/npz_writer.h"

#include <limits>
#include <stdexcept>

#include "vin/diagnostics/container/crc32.h"

namespace vin::diagnostics {
namespace {

constexpr std::uint32_t kLocalHeader = 0x04034b50;
constexpr std::uint32_t kCentralHeader = 0x02014b50;
constexpr std::uint32_t kEndOfDirectory = 0x06054b50;
constexpr std::uint16_t kVersion = 20;    // 2.0: stored members, no zip64
constexpr std::uint16_t kDosDate = 0x21;  // 1980-01-01, fixed: the same capture, the same file
constexpr std::size_t kMaxMembers = 0xffff;
constexpr std::uint64_t kMaxOffset = 0xffffffffu;

void put16(std::string& out, std::uint16_t v) {
  out += static_cast<char>(v & 0xff);
  out += static_cast<char>(v >> 8);
}

void put32(std::string& out, std::uint32_t v) {
  for (int i = 0; i < 4; ++i) out += static_cast<char>((v >> (8 * i)) & 0xff);
}

// The fields local and central headers share, from "version needed" to "extra length".
void common_fields(std::string& out, std::uint32_t crc, std::uint32_t size, std::size_t name) {
  put16(out, kVersion);
  put16(out, 0);  // flags
  put16(out, 0);  // stored
  put16(out, 0);  // time
  put16(out, kDosDate);
  put32(out, crc);
  put32(out, size);  // compressed
  put32(out, size);
  put16(out, static_cast<std::uint16_t>(name));
  put16(out, 0);  // extra
}

}  // namespace

std::string npy_header(std::string_view descr, const std::vector<std::int64_t>& shape) {
  std::string dims;
  for (const std::int64_t d : shape) dims += std::to_string(d) + ", ";
  if (shape.size() > 1) dims.resize(dims.size() - 2);  // (2, 3); one dimension keeps "(5,)"
  if (shape.size() == 1) dims.resize(dims.size() - 1);
  std::string dict =
      "{'descr': '" + std::string(descr) + "', 'fortran_order': False, 'shape': (" + dims + "), }";
  // magic (6) + version (2) + length (2) + dict + padding + '\n': a multiple of 64
  const std::size_t unpadded = 10 + dict.size() + 1;
  dict.append((64 - unpadded % 64) % 64, ' ');
  dict += '\n';
  std::string header("\x93NUMPY\x01\x00", 8);
  put16(header, static_cast<std::uint16_t>(dict.size()));
  return header + dict;
}

NpzWriter::NpzWriter(const std::string& path) : file_(path) {}
NpzWriter::NpzWriter(const PlannedOutput& planned) : file_(planned) {}

bool NpzWriter::fits(const std::string& name, std::size_t nbytes) const {
  // a generous header allowance: the .npy header and both zip headers
  const std::uint64_t overhead = 30 + 46 + 2 * (name.size() + 4) + 256 + 64 * 16;
  return entries_.size() < kMaxMembers && name.size() + 4 <= 0xffff &&
         offset_ + nbytes + overhead + 22 + 46 * (entries_.size() + 1) <= kMaxOffset;
}

void NpzWriter::add(const std::string& name, const NpyView& array) {
  const std::string member = name + ".npy";
  if (!fits(name, array.nbytes)) throw std::length_error("past the .npz format's limits");
  const std::string header = npy_header(array.descr, array.shape);
  const std::uint32_t crc =
      crc32_update(crc32_update(0, header.data(), header.size()), array.data, array.nbytes);
  const auto size = static_cast<std::uint32_t>(header.size() + array.nbytes);
  std::string local;
  put32(local, kLocalHeader);
  common_fields(local, crc, size, member.size());
  local += member;
  entries_.push_back({member, crc, size, static_cast<std::uint32_t>(offset_)});
  file_.write(local);
  file_.write(header);
  file_.write(std::string_view(static_cast<const char*>(array.data), array.nbytes));
  offset_ += local.size() + size;
}

void NpzWriter::finish() {
  std::string directory;
  for (const Entry& e : entries_) {
    put32(directory, kCentralHeader);
    put16(directory, kVersion);  // made by
    common_fields(directory, e.crc, e.size, e.name.size());
    put16(directory, 0);  // comment
    put16(directory, 0);  // disk
    put16(directory, 0);  // internal attributes
    put32(directory, 0);  // external attributes
    put32(directory, e.offset);
    directory += e.name;
  }
  std::string end;
  put32(end, kEndOfDirectory);
  put16(end, 0);
  put16(end, 0);
  put16(end, static_cast<std::uint16_t>(entries_.size()));
  put16(end, static_cast<std::uint16_t>(entries_.size()));
  put32(end, static_cast<std::uint32_t>(directory.size()));
  put32(end, static_cast<std::uint32_t>(offset_));
  put16(end, 0);
  file_.write(directory);
  file_.write(end);
  file_.commit();
}

}  // namespace vin::diagnostics
