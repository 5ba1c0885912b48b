#include <doctest/doctest.h>
#include <zlib.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "byte_literal.h"
#include "tar_bytes.h"
#include "vin/diagnostics/formats/file_kind.h"
#include "vin/diagnostics/container/tar_archive.h"
#include "vin/diagnostics/formats/weights_sets.h"
#include "vin/diagnostics/records/error.h"

using namespace vin::diagnostics;

namespace {

std::string scratch_tar(const std::string& name, const std::string& bytes) {
  const std::string path = (std::filesystem::temp_directory_path() / name).string();
  std::ofstream(path, std::ios::binary) << bytes;
  return path;
}

std::string le64(std::int64_t v) {
  std::string out(8, '\0');
  for (int i = 0; i < 8; ++i) out[i] = static_cast<char>((static_cast<std::uint64_t>(v) >> (8 * i)) & 0xff);
  return out;
}

std::string floats(const std::vector<float>& values) {
  std::string out(values.size() * 4, '\0');
  std::memcpy(out.data(), values.data(), out.size());
  return out;
}

// a tensor's metadata as the tensors member holds it: ndim in 4 bytes and 4 torch skips, then
// the sizes, the strides and the offset in 8 bytes each
std::string metadata(const std::vector<std::int64_t>& sizes, const std::vector<std::int64_t>& strides,
                     std::int64_t offset) {
  std::string out = le64(static_cast<std::int64_t>(sizes.size()));
  for (const auto s : sizes) out += le64(s);
  for (const auto s : strides) out += le64(s);
  return out + le64(offset);
}

// The parts of a small torch.save tar file, as PyTorch 0.3 wrote them: a float storage 11 of
// six elements and a long storage 21 of one, a view 31 of storage 11 from element 2 for three;
// tensors 12 (2x3 on 11), 13 (3 on the view 31) and 14 (a scalar on 21); the value
// {"w": 12, "v": 13, "n": 14}.
struct TarParts {
  std::string sys_info = BYTES("\x80\x02}X\x0d\x00\x00\x00little_endian\x88s.");
  std::string storages =
      BYTES("\x80\x02K\x02.") +
      BYTES("\x80\x02(K\x0bX\x03\x00\x00\x00" "cpuctorch\nFloatStorage\nt.") + le64(6) +
      floats({0, 1, 2, 3, 4, 5}) +
      BYTES("\x80\x02(K\x15X\x03\x00\x00\x00" "cpuctorch\nLongStorage\nt.") + le64(1) + le64(7) +
      BYTES("\x80\x02](K\x1fK\x0bK\x02K\x03ta.");
  std::string tensors =
      BYTES("\x80\x02K\x03.") + BYTES("\x80\x02(K\x0cK\x0b" "ctorch\nFloatTensor\nt.") +
      metadata({2, 3}, {3, 1}, 0) + BYTES("\x80\x02(K\x0dK\x1f" "ctorch\nFloatTensor\nt.") +
      metadata({3}, {1}, 0) + BYTES("\x80\x02(K\x0eK\x15" "ctorch\nLongTensor\nt.") +
      metadata({}, {}, 0);
  std::string pickle = BYTES(
      "\x80\x02}(X\x01\x00\x00\x00wX\x02\x00\x00\x00" "12QX\x01\x00\x00\x00vX\x02\x00\x00\x00"
      "13QX\x01\x00\x00\x00nX\x02\x00\x00\x00" "14Qu.");

  std::string file() const {
    return tar_of(std::vector<TarEntry>{
        {"sys_info", sys_info}, {"pickle", pickle}, {"tensors", tensors}, {"storages", storages}});
  }
};

std::string crc_of(const std::string& bytes) {
  char hex[9];
  std::snprintf(hex, sizeof hex, "%08lx",
                crc32(0L, reinterpret_cast<const Bytef*>(bytes.data()), static_cast<uInt>(bytes.size())));
  return hex;
}

ModelMetadata described(const std::string& name, const std::string& bytes) {
  InspectDetails details;
  details.tensors = true;
  return describe_weights_file(classify_file(scratch_tar(name, bytes)), details);
}

std::string refusal(const std::string& name, const std::string& bytes) {
  try {
    described(name, bytes);
  } catch (const Error& e) {
    return e.what();
  }
  return "(read)";
}

}  // namespace

TEST_CASE("read_tar lists a tar's files where they lie") {
  const std::string pax = "20 path=a/long/name\n";
  const std::string bytes = tar_of(std::vector<TarEntry>{
      {"dir/", "", '5'}, {"one", "abc"}, {"././@PaxHeader", pax, 'x'}, {"short", "12345"},
      {"././@LongLink", std::string(150, 'n') + '\0', 'L'}, {"cut", "z"}});
  const auto tar = read_tar(*InputFile::open(scratch_tar("list.tar", bytes)));
  REQUIRE(tar);
  CHECK_FALSE(tar->problem);
  REQUIRE(tar->members.size() == 3);  // the directory and the extended headers are not files
  CHECK(tar->members[0].name == "one");
  CHECK(tar->members[0].begin == 1024);
  CHECK(tar->members[0].size == 3);
  CHECK(tar->members[1].name == "a/long/name");  // the pax header's path
  CHECK(tar->members[1].size == 5);
  CHECK(tar->members[2].name == std::string(150, 'n'));  // a GNU long name
  // the first few only (the classifier's look)
  CHECK(read_tar(*InputFile::open(scratch_tar("few.tar", bytes)), 2)->members.size() == 1);

  // not a tar: no ustar magic, or a checksum that does not match
  CHECK_FALSE(read_tar(*InputFile::open(scratch_tar("plain.txt", std::string(1024, 'a')))));
  std::string bad = bytes;
  bad[0] = 'D';
  CHECK_FALSE(read_tar(*InputFile::open(scratch_tar("sum.tar", bad))));
  // damage after the first header: a problem naming the header's byte
  std::string later = bytes;
  later[512 + 1] = 'x';  // inside "one"'s header
  const auto damaged = read_tar(*InputFile::open(scratch_tar("later.tar", later)));
  REQUIRE(damaged);
  CHECK(*damaged->problem == "the header at byte 512: not a tar header (its magic or checksum)");
  // a size past the file, and a file cut inside a member
  std::string longer = tar_of(std::vector<TarEntry>{{"big", std::string(600, 'b')}});
  const auto cut = read_tar(*InputFile::open(scratch_tar("cut.tar", longer.substr(0, 900))));
  REQUIRE(cut);
  CHECK(*cut->problem == "the header at byte 0: a member of 600 bytes, more than the 388 left in "
                         "the file");
  // without the end-of-archive blocks, a tar that ends on a member's end is whole
  const auto open_end = read_tar(*InputFile::open(scratch_tar("end.tar", longer.substr(0, 1536))));
  REQUIRE(open_end);
  CHECK_FALSE(open_end->problem);
  CHECK(open_end->members.size() == 1);
  // a malformed pax record
  const std::string bad_pax = tar_of(std::vector<TarEntry>{{"x", "99 path=a\n", 'x'}, {"f", "1"}});
  CHECK(*read_tar(*InputFile::open(scratch_tar("pax.tar", bad_pax)))->problem ==
        "the header at byte 0: a malformed pax extended header");
}

TEST_CASE("torch.save's tar format (PyTorch 0.1-0.3) is read as data") {
  const TarParts parts;
  const std::string path = scratch_tar("old.pt", parts.file());
  CHECK(classify_file(path).kind == FileKind::torch_save_tar);
  const ModelMetadata model = described("old.pt", parts.file());
  const WeightsFile& weights = *model.details().weights_file;
  CHECK(weights.format == "torch_save_tar");
  CHECK(weights.dtypes ==
        std::vector<std::pair<std::string, std::int64_t>>{{"torch.float32", 9}, {"torch.int64", 1}});
  CHECK(model.total_parameters() == 10);
  const auto& tensors = *model.modules()[0].details().tensors;
  REQUIRE(tensors.size() == 3);
  const auto tensor = [&](const std::string& key) {
    for (const auto& t : tensors)
      if (t.key == key) return t;
    FAIL("no tensor " << key);
    return tensors[0];
  };
  CHECK(tensor("w").shape == std::vector<std::int64_t>{2, 3});
  CHECK(tensor("w").device == "cpu");
  CHECK(*tensor("w").data_crc32 == crc_of(floats({0, 1, 2, 3, 4, 5})));
  // on the view: elements 2, 3 and 4 of storage 11; its storage is the view's three elements
  CHECK(*tensor("v").data_crc32 == crc_of(floats({2, 3, 4})));
  CHECK(*tensor("v").storage_crc32 == crc_of(floats({2, 3, 4})));
  CHECK(tensor("n").shape.empty());
  CHECK(tensor("n").dtype == "torch.int64");
  CHECK(*tensor("n").data_crc32 == crc_of(le64(7)));
}

TEST_CASE("a damaged torch.save tar file is refused naming the member and the entry") {
  const auto refused = [](TarParts parts) { return refusal("bad.pt", parts.file()); };
  TarParts missing;
  CHECK(refusal("bad.pt", tar_of(std::vector<TarEntry>{{"pickle", missing.pickle},
                                                      {"storages", missing.storages}})) ==
        std::string(std::filesystem::temp_directory_path() / "bad.pt") +
            ": not a readable torch.save tar file: it has no member tensors");
  TarParts twice;
  CHECK(refusal("bad.pt", tar_of(std::vector<TarEntry>{{"pickle", twice.pickle},
                                                      {"pickle", twice.pickle},
                                                      {"tensors", twice.tensors},
                                                      {"storages", twice.storages}}))
            .find("the member pickle is there twice") != std::string::npos);
  // a storage count its member's bytes cannot hold
  TarParts many;
  many.storages.replace(0, 5, BYTES("\x80\x02J\x00\x00\x00\x10."));
  CHECK(refused(many).find("member storages: its count of storages is not a number its bytes "
                           "can hold") != std::string::npos);
  // a storage longer than its member
  TarParts long_storage;
  long_storage.storages.replace(long_storage.storages.find(le64(6)), 8, le64(1000));
  CHECK(refused(long_storage).find("the storage 11 of 1000 elements needs 1000 x 4 bytes, more "
                                   "than the") != std::string::npos);
  // a storage type no dtype is known for
  TarParts unknown;
  unknown.storages.replace(unknown.storages.find("FloatStorage"), 12, "WeirdStorage");
  CHECK(refused(unknown).find("the storage 11 is of type torch.WeirdStorage, which this tool "
                              "does not know") != std::string::npos);
  // a view past its storage
  TarParts view;
  view.storages.replace(view.storages.find(BYTES("K\x02K\x03ta.")), 8, BYTES("K\x02K\x05ta."));
  CHECK(refused(view).find("the storage view 31 of elements 2 to 2 + 5 is outside its storage's "
                           "6") != std::string::npos);
  // a tensor past its storage (an offset), on a storage not there, with a negative size
  TarParts past;
  past.tensors.replace(past.tensors.find(metadata({2, 3}, {3, 1}, 0)), 48,
                       metadata({2, 3}, {3, 1}, 1));
  CHECK(refused(past).find("member tensors: the tensor 12 (offset 1) reaches past the end of its "
                           "storage 11 of 6 elements") != std::string::npos);
  TarParts nowhere;
  nowhere.tensors.replace(nowhere.tensors.find(BYTES("K\x0cK\x0b")), 4, BYTES("K\x0cK\x63"));
  CHECK(refused(nowhere).find("the tensor 12's storage 99 is not among the storages") !=
        std::string::npos);
  TarParts dims;
  dims.tensors.replace(dims.tensors.find(metadata({2, 3}, {3, 1}, 0)), 8, le64(1'000'000));
  CHECK(refused(dims).find("the tensor 12 of 1000000 dimensions: more than its member's bytes "
                           "can describe") != std::string::npos);
  // a value that calls something: named, never called
  TarParts calls;
  calls.pickle = BYTES("\x80\x02" "cposix\nsystem\nX\x02\x00\x00\x00ls\x85R.");
  CHECK(refused(calls).find("posix.system") != std::string::npos);
}
