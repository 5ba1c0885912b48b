#include <doctest/doctest.h>

#include <cstring>
#include <string>

#include "fixtures.h"
#include "vin/diagnostics/formats/file_kind.h"
#include "vin/diagnostics/npy/npy_reader.h"
#include "vin/diagnostics/records/error.h"

using namespace vin::diagnostics;

namespace {

// A version 1.0 .npy image with `header` (padded as numpy pads it) followed by `data`.
std::string npy(const std::string& header, const std::string& data, int major = 1) {
  std::string text = header;
  const std::size_t prefix = major == 1 ? 10 : 12;
  while ((prefix + text.size() + 1) % 64 != 0) text += ' ';
  text += '\n';
  std::string out = std::string("\x93NUMPY", 6) + static_cast<char>(major) + '\0';
  const std::size_t n = text.size();
  out += static_cast<char>(n & 0xFF);
  out += static_cast<char>((n >> 8) & 0xFF);
  if (major != 1) out += std::string("\0\0", 2);
  return out + text + data;
}

std::string npy_error(const std::string& bytes) {
  try {
    parse_npy(bytes, "x.npy");
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

std::string le32(std::uint32_t v) {
  std::string s(4, '\0');
  for (int i = 0; i < 4; ++i) s[i] = static_cast<char>((v >> (8 * i)) & 0xFF);
  return s;
}

}  // namespace

TEST_CASE("a .npy image: dtype, shape, order and bytes") {
  const NpyArray a = parse_npy(
      npy("{'descr': '<i4', 'fortran_order': False, 'shape': (2,), }", le32(7) + le32(0xFFFFFFFF)),
      "x.npy");
  CHECK(a.kind == NpyKind::signed_integer);
  CHECK(a.item_size == 4);
  CHECK(a.shape == std::vector<std::int64_t>{2});
  CHECK(!a.fortran_order);
  CHECK(a.dtype_name() == "int32");
  std::int32_t values[2];
  std::memcpy(values, a.data.data(), 8);
  CHECK(values[0] == 7);
  CHECK(values[1] == -1);
}

TEST_CASE("big-endian data is converted to this machine's order; complex halves swap alone") {
  const NpyArray a = parse_npy(npy("{'descr': '>i4', 'fortran_order': False, 'shape': (), }",
                                   std::string("\x00\x00\x01\x02", 4)),
                               "x.npy");
  std::int32_t v;
  std::memcpy(&v, a.data.data(), 4);
  CHECK(v == 0x0102);
  CHECK(a.shape.empty());
  CHECK(a.numel() == 1);
  // complex64 1+2j, big-endian: each float32 part swaps on its own
  const std::string one = std::string("\x3f\x80\x00\x00", 4),
                    two = std::string("\x40\x00\x00\x00", 4);
  const NpyArray c = parse_npy(
      npy("{'descr': '>c8', 'fortran_order': False, 'shape': (1,), }", one + two), "x.npy");
  float parts[2];
  std::memcpy(parts, c.data.data(), 8);
  CHECK(parts[0] == 1.0f);
  CHECK(parts[1] == 2.0f);
}

TEST_CASE("format version 2 headers, Fortran order, empty arrays") {
  const NpyArray a = parse_npy(
      npy("{'descr': '<f8', 'fortran_order': True, 'shape': (0, 3), }", "", /*major=*/2), "x.npy");
  CHECK(a.fortran_order);
  CHECK(a.shape == std::vector<std::int64_t>{0, 3});
  CHECK(a.data.empty());
}

TEST_CASE("hostile or unsupported .npy images are errors naming the source") {
  const std::string f4 = "{'descr': '<f4', 'fortran_order': False, 'shape': ";
  CHECK(npy_error("") == "x.npy: not a .npy array (no \\x93NUMPY magic)");
  CHECK(npy_error("PK\x03\x04 not npy") == "x.npy: not a .npy array (no \\x93NUMPY magic)");
  CHECK(npy_error(npy(f4 + "(2,), }", "1234"))
            .find("shorter than the header's shape needs (8 bytes") != std::string::npos);
  CHECK(npy_error(npy(f4 + "(1,), }", "12345678")).find("longer than the header's shape needs") !=
        std::string::npos);
  CHECK(npy_error(npy(f4 + "(1000000000000000,), }", "1234")).find("shorter") != std::string::npos);
  CHECK(
      npy_error(npy(f4 + "(4294967296, 4294967296, 4294967296), }", "")).find("impossibly large") !=
      std::string::npos);
  CHECK(npy_error(npy(f4 + "(99999999999999999999,), }", ""))
            .find("a dimension of the shape is too large") != std::string::npos);
  CHECK(npy_error(npy(f4 + "(-1,), }", "")).find("malformed shape") != std::string::npos);
  CHECK(npy_error(npy("{'descr': '|O', 'fortran_order': False, 'shape': (1,), }", "12345678"))
            .find("object arrays (dtype=object) are not supported") != std::string::npos);
  CHECK(npy_error(npy("{'descr': '<U3', 'fortran_order': False, 'shape': (1,), }", ""))
            .find("unsupported dtype '<U3'") != std::string::npos);
  CHECK(npy_error(npy("{'descr': '<u8', 'fortran_order': False, 'shape': (1,), }", ""))
            .find("no unsigned integer type wider than uint8") != std::string::npos);
  CHECK(npy_error(npy("{'descr': '<f16', 'fortran_order': False, 'shape': (1,), }", ""))
            .find("unsupported dtype") != std::string::npos);
  CHECK(npy_error(npy("{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (1,), }", ""))
            .find("structured (record) dtypes are not supported") != std::string::npos);
  CHECK(npy_error(npy("{'descr': '<f4', 'shape': (1,), }", "1234")).find("lacks descr") !=
        std::string::npos);
  CHECK(npy_error(npy("{'descr': '<f4', 'fortran_order': Maybe, 'shape': (1,), }", ""))
            .find("fortran_order is not True or False") != std::string::npos);
  CHECK(npy_error(npy("{'descr': '<f4', 'extra': 1, 'shape': (1,), }", ""))
            .find("unexpected header key 'extra'") != std::string::npos);
  CHECK(npy_error(npy("[1, 2, 3]", "")).find("malformed header") != std::string::npos);
  CHECK(npy_error(std::string("\x93NUMPY\x09\x00", 8)).find("unsupported .npy format version 9") !=
        std::string::npos);
  CHECK(npy_error(std::string("\x93NUMPY\x02\x00", 8) + le32(0x7FFFFFFF))
            .find("header of 2147483647 bytes is too large") != std::string::npos);
  CHECK(npy_error(std::string("\x93NUMPY\x01\x00\x50\x00{'descr'", 17))
            .find("truncated .npy header") != std::string::npos);
}

TEST_CASE(".npz files written by numpy: stored and deflated, every dtype, both byte orders") {
  for (const char* file : {"inputs/dtypes.npz", "inputs/dtypes_compressed.npz"}) {
    CAPTURE(file);
    const auto arrays = read_npz_file(fixture(file));
    REQUIRE(arrays.size() == 19);
    for (const auto& a : arrays) {
      CAPTURE(a.name);
      CHECK(a.shape == std::vector<std::int64_t>{2, 3});
      CHECK(a.data.size() == 6 * a.item_size);
    }
    CHECK(arrays[0].name == "le_f2");
    CHECK(arrays[0].dtype_name() == "float16");
    CHECK(arrays[8].name == "na_b1");
    CHECK(arrays[8].dtype_name() == "bool");
    CHECK(arrays[18].name == "be_c16");
    CHECK(arrays[18].dtype_name() == "complex128");
  }
}

TEST_CASE("damaged .npz files") {
  auto npz_error = [](const std::string& name) {
    try {
      read_npz_file(fixture("inputs/" + name));
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  CHECK(npz_error("truncated.npz").find("truncated or damaged zip archive") != std::string::npos);
  CHECK(npz_error("short_member.npz").find("(member arr_0.npy): the data is shorter") !=
        std::string::npos);
  CHECK(npz_error("not_npy_member.npz").find("(member notes.txt): an .npz member that is not") !=
        std::string::npos);
  CHECK(npz_error("object.npz").find("object arrays") != std::string::npos);
  CHECK(npz_error("uint16.npz").find("'<u2'") != std::string::npos);
}

TEST_CASE("an .npz whose members give one name twice is ambiguous: a usage error, nothing read") {
  for (const auto& [file, says] :
       {std::pair<std::string, std::string>{"duplicate_member.npz",
                                            "two arrays named 'arr_0' (the member arr_0.npy twice)"},
        {"duplicate_name.npz", "two arrays named 'x' (the members x and x.npy)"}}) {
    const ClassifiedFile zip = classify_file(fixture("inputs/" + file), "an .npz file");
    REQUIRE(static_cast<bool>(zip.zip));
    CHECK_THROWS_WITH_AS(npz_array_names(*zip.zip), doctest::Contains(says.c_str()), UsageError);
    CHECK_THROWS_WITH_AS(read_npz_file(*zip.zip), doctest::Contains(says.c_str()), UsageError);
  }
}
