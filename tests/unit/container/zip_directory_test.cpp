// The zip layout checks (zip_directory.h) on archives PyTorch wrote and on forged ones: what
// torch writes (data descriptors, local headers with zero CRC and sizes and a padding extra field
// the directory does not repeat) and Zip64 records are read under every libzip; a name, method,
// CRC or size that differs between a local header and the directory, a data descriptor that
// disagrees, overlapping members, data outside the archive and encrypted members are refused
// naming the file and the member.
#include <doctest/doctest.h>
#include <zlib.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <string>
#include <vector>

#include "fixtures.h"
#include "vin/diagnostics/container/zip_archive.h"
#include "vin/diagnostics/container/zip_directory.h"
#include "vin/diagnostics/records/error.h"

using namespace vin::diagnostics;

namespace {

std::string read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  REQUIRE(in);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

std::string temporary_path(const std::string& name) {
  return (std::filesystem::temp_directory_path() / ("vin_zip_directory_test_" + name)).string();
}

std::string written(const std::string& name, const std::string& bytes) {
  const std::string path = temporary_path(name);
  std::ofstream(path, std::ios::binary) << bytes;
  return path;
}

std::uint32_t get32(const std::string& b, std::size_t at) {
  std::uint32_t v = 0;
  for (int i = 3; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(b[at + i]);
  return v;
}
std::uint16_t get16(const std::string& b, std::size_t at) {
  return static_cast<std::uint16_t>(static_cast<unsigned char>(b[at]) |
                                    static_cast<unsigned char>(b[at + 1]) << 8);
}
void put(std::string& b, std::size_t at, std::uint64_t value, int width) {
  for (int i = 0; i < width; ++i) b[at + i] = static_cast<char>(value >> (8 * i));
}
std::string le(std::uint64_t value, int width) {
  std::string out(static_cast<std::size_t>(width), '\0');
  put(out, 0, value, width);
  return out;
}

// Where each central directory entry of `bytes` starts (the test's own walk).
std::vector<std::size_t> central_entries(const std::string& bytes, const ZipDirectory& d) {
  std::vector<std::size_t> at;
  std::size_t p = static_cast<std::size_t>(d.offset);
  for (std::size_t i = 0; i < d.entries.size(); ++i) {
    at.push_back(p);
    p += 46 + get16(bytes, p + 28) + get16(bytes, p + 30) + get16(bytes, p + 32);
  }
  return at;
}

// What opening `bytes` as a zip says: "" when it opens and every member reads whole.
std::string open_error(const std::string& name, const std::string& bytes) {
  const std::string path = written(name, bytes);
  std::string error;
  try {
    const ZipArchive zip(InputFile::open(path));
    for (std::size_t i = 0; i < zip.entries().size(); ++i) zip.read(i, 1 << 30, "m");
  } catch (const Error& e) {
    error = e.what();
  }
  std::filesystem::remove(path);
  return error;
}

// A stored zip written here byte by byte, for the layouts no writer at hand makes: members whose
// local headers carry Zip64 sizes (as Python's zipfile writes with force_zip64, and numpy with
// it), central entries with Zip64 sizes and offsets, and a Zip64 end record.
std::string zip64_archive(const std::vector<std::pair<std::string, std::string>>& members) {
  std::string out, central;
  for (const auto& [name, data] : members) {
    const std::uint64_t offset = out.size();
    const auto crc = static_cast<std::uint32_t>(
        crc32(0, reinterpret_cast<const Bytef*>(data.data()), static_cast<uInt>(data.size())));
    const std::string local_extra = le(1, 2) + le(16, 2) + le(data.size(), 8) + le(data.size(), 8);
    out += le(0x04034b50, 4) + le(45, 2) + le(0, 2) + le(0, 2) + le(0, 4) + le(crc, 4) +
           le(0xFFFFFFFF, 4) + le(0xFFFFFFFF, 4) + le(name.size(), 2) + le(local_extra.size(), 2) +
           name + local_extra + data;
    const std::string extra =
        le(1, 2) + le(24, 2) + le(data.size(), 8) + le(data.size(), 8) + le(offset, 8);
    central += le(0x02014b50, 4) + le(45, 2) + le(45, 2) + le(0, 2) + le(0, 2) + le(0, 4) +
               le(crc, 4) + le(0xFFFFFFFF, 4) + le(0xFFFFFFFF, 4) + le(name.size(), 2) +
               le(extra.size(), 2) + le(0, 2) + le(0, 2) + le(0, 2) + le(0, 4) + le(0xFFFFFFFF, 4) +
               name + extra;
  }
  const std::uint64_t directory = out.size(), count = members.size();
  out += central;
  const std::uint64_t record = out.size();
  out += le(0x06064b50, 4) + le(44, 8) + le(45, 2) + le(45, 2) + le(0, 4) + le(0, 4) +
         le(count, 8) + le(count, 8) + le(central.size(), 8) + le(directory, 8);
  out += le(0x07064b50, 4) + le(0, 4) + le(record, 8) + le(1, 4);
  out += le(0x06054b50, 4) + le(0, 2) + le(0, 2) + le(0xFFFF, 2) + le(0xFFFF, 2) +
         le(0xFFFFFFFF, 4) + le(0xFFFFFFFF, 4) + le(0, 2);
  return out;
}

}  // namespace

TEST_CASE("an archive torch.jit.save wrote: data descriptors and local-only extra fields read") {
  const std::string path = fixture("convnet.pt");
  const std::string bytes = read_bytes(path);
  const auto file = InputFile::open(path);
  const ZipDirectory directory = read_zip_directory(*file);
  REQUIRE(directory.entries.size() > 3);
  // the layout libzip 1.12's ZIP_CHECKCONS refuses: the descriptor flag, zeros where the CRC
  // and sizes would be, a padding extra field the directory does not repeat
  const std::size_t first = static_cast<std::size_t>(directory.entries[0].local_offset);
  CHECK((get16(bytes, first + 6) & 0x8) != 0);
  CHECK(get32(bytes, first + 14) == 0);
  CHECK(get32(bytes, first + 22) == 0);
  CHECK(get16(bytes, first + 28) > 0);
  CHECK(get16(bytes, central_entries(bytes, directory)[0] + 30) == 0);
  CHECK_NOTHROW(check_zip_members(*file, directory));
  CHECK(open_error("torch.pt", bytes).empty());
}

TEST_CASE("Zip64 records: sizes in local and central extra fields, a Zip64 end record") {
  const std::string bytes = zip64_archive(
      {{"a/first", "the first member"}, {"a/second", ""}, {"a/third", std::string(70000, 'x')}});
  CHECK(open_error("zip64.zip", bytes).empty());
  const std::string path = written("zip64_read.zip", bytes);
  {
    const ZipArchive zip(InputFile::open(path));
    REQUIRE(zip.entries().size() == 3);
    CHECK(zip.read(0, 100, "m") == "the first member");
    CHECK(zip.read(2, 1 << 20, "m") == std::string(70000, 'x'));
  }
  std::filesystem::remove(path);
  // a saturated size whose Zip64 field is missing
  std::string cut = bytes;
  put(cut, 30 + 7 + 0, 2, 2);  // the first local extra field's id: no longer Zip64
  CHECK(open_error("zip64_cut.zip", cut)
            .find("the member a/first: its local header lacks the "
                  "Zip64 sizes it refers to") != std::string::npos);
}

TEST_CASE("forged archives are refused naming the file and the member") {
  const std::string path = fixture("convnet.pt");
  const std::string bytes = read_bytes(path);
  const ZipDirectory directory = read_zip_directory(*InputFile::open(path));
  const std::vector<std::size_t> central = central_entries(bytes, directory);
  const auto local = [&](std::size_t i) {
    return static_cast<std::size_t>(directory.entries[i].local_offset);
  };
  const std::string second = directory.entries[1].name;

  struct Forgery {
    const char* what;
    std::function<void(std::string&)> edit;
    std::string expected;
  };
  const std::vector<Forgery> forgeries = {
      {"a local header that names another member",
       [&](std::string& b) { b[local(1) + 30 + second.size() - 1] ^= 1; },
       "the member " + second + ": its local header names another member"},
      {"a local header with another compression method",
       [&](std::string& b) { put(b, local(1) + 8, 8, 2); },
       "the member " + second + ": its local header and the directory name different " +
           "compression methods"},
      {"a local CRC that is not zero and differs",
       [&](std::string& b) { put(b, local(1) + 14, directory.entries[1].crc ^ 1, 4); },
       "the member " + second + ": its local header and the directory give different CRCs"},
      {"a local size that is not zero and differs",
       [&](std::string& b) { put(b, local(1) + 22, directory.entries[1].size + 1, 4); },
       "the member " + second + ": its local header and the directory give different sizes"},
      {"a data descriptor whose CRC differs",
       [&](std::string& b) {
         const std::size_t data = local(1) + 30 + get16(b, local(1) + 26) + get16(b, local(1) + 28);
         b[data + directory.entries[1].compressed_size + 4] ^= 1;
       },
       "the member " + second + ": its data descriptor is missing or disagrees with the directory"},
      {"two directory entries for one local header",
       [&](std::string& b) { put(b, central[1] + 42, local(0), 4); }, "its data overlaps that of"},
      {"a member that starts inside another's data",
       [&](std::string& b) { put(b, central[1] + 42, local(1) - 8, 4); },
       "its data overlaps that of " + directory.entries[0].name},
      {"a local header past the members",
       [&](std::string& b) { put(b, central[1] + 42, directory.offset + 2, 4); },
       "the member " + second + ": its local header lies outside the archive's members"},
      {"a member whose data runs into the directory",
       [&](std::string& b) {
         const std::size_t last = directory.entries.size() - 1;
         const auto grown = directory.entries[last].compressed_size + 64;
         put(b, central[last] + 20, grown, 4);  // stored: both sizes grow, as stored ones must
         put(b, central[last] + 24, grown, 4);
       },
       "its data runs past the archive's members"},
      {"an encrypted member", [&](std::string& b) { b[central[2] + 8] |= 1; },
       "the member " + directory.entries[2].name + ": it is encrypted"},
      // torch writes a Zip64 end record after the short one
      {"an end record that disagrees with the Zip64 one",
       [&](std::string& b) {
         const std::size_t end = b.rfind(std::string("PK\x05\x06", 4));
         put(b, end + 16, get32(b, end + 16) + 100, 4);
       },
       "its end record and its Zip64 end record disagree"},
      {"more members than the directory's bytes hold",
       [&](std::string& b) {
         const std::size_t end = b.rfind(std::string("PK\x05\x06", 4));
         put(b, end + 8, 0xFFFF, 2);  // saturated: see the Zip64 record
         put(b, end + 10, 0xFFFF, 2);
         const std::size_t wide = b.rfind(std::string("PK\x06\x06", 4));
         put(b, wide + 24, 1000000, 8);
         put(b, wide + 32, 1000000, 8);
       },
       "its directory records 1000000 members, more than its"},
      {"a directory past the end record",
       [&](std::string& b) {
         const std::size_t end = b.rfind(std::string("PK\x05\x06", 4));
         put(b, end + 16, 0xFFFFFFFF, 4);
         const std::size_t wide = b.rfind(std::string("PK\x06\x06", 4));
         put(b, wide + 48, directory.offset + 100, 8);
       },
       "its directory lies outside the archive"},
  };
  for (const Forgery& forgery : forgeries) {
    const std::string what = forgery.what;
    CAPTURE(what);
    std::string forged = bytes;
    forgery.edit(forged);
    const std::string error = open_error("forged.pt", forged);
    CAPTURE(error);
    CHECK(error.find("vin_zip_directory_test_forged.pt: truncated or damaged zip archive (") !=
          std::string::npos);
    CHECK(error.find(forgery.expected) != std::string::npos);
  }
}

TEST_CASE("without a data descriptor, a local header's zero CRC or size is a difference too") {
  // a zip without descriptors (Python's zipfile and numpy write these): numpy's .npz fixture
  const std::string path = std::string(VIN_FIXTURE_DIR) + "/inputs/dtypes.npz";
  const std::string bytes = read_bytes(path);
  const ZipDirectory directory = read_zip_directory(*InputFile::open(path));
  const std::size_t local = static_cast<std::size_t>(directory.entries[0].local_offset);
  REQUIRE((get16(bytes, local + 6) & 0x8) == 0);
  CHECK(open_error("plain.npz", bytes).empty());
  std::string forged = bytes;
  put(forged, local + 14, 0, 4);
  CHECK(open_error("plain.npz", forged).find("give different CRCs") != std::string::npos);
}
