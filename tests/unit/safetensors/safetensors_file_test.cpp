#include <doctest/doctest.h>
#include <zlib.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>

#include "vin/diagnostics/container/input_file.h"
#include "vin/diagnostics/safetensors/safetensors_file.h"
#include "vin/diagnostics/records/error.h"
#include "vin/diagnostics/container/crc32.h"

using namespace vin::diagnostics;

namespace {

// A safetensors file: the header's length (8 bytes, little-endian), the header, the data.
std::string safetensors_with(const std::string& header, const std::string& data,
                             std::uint64_t length_said = UINT64_MAX) {
  const std::uint64_t length = length_said == UINT64_MAX ? header.size() : length_said;
  std::string out;
  for (int b = 0; b < 8; ++b) out.push_back(static_cast<char>(length >> (8 * b) & 0xff));
  return out + header + data;
}

InputFilePtr safetensors_file(const std::string& bytes) {
  return InputFile::from_bytes("model.safetensors", bytes);
}

SafetensorsHeader header_of(const std::string& header, const std::string& data) {
  return read_safetensors_header(*safetensors_file(safetensors_with(header, data)));
}

// The refusal read_safetensors_header makes of `bytes`.
std::string refusal_of(const std::string& bytes) {
  try {
    read_safetensors_header(*safetensors_file(bytes));
  } catch (const Error& e) {
    return e.what();
  }
  return "(read)";
}

std::string refusal_of_header(const std::string& header, const std::string& data) {
  return refusal_of(safetensors_with(header, data));
}

const std::string kPrefix = "model.safetensors: not a valid safetensors file: ";

}  // namespace

TEST_CASE("a safetensors header is read as the format writes it") {
  // two tensors, their bytes in the order of their offsets (not of the header), metadata,
  // the header padded with spaces as the reference writer pads it to 8 bytes
  const std::string header =
      R"({"b":{"dtype":"F32","shape":[2,2],"data_offsets":[4,20]},)"
      R"("__metadata__":{"format":"pt"},"a.x":{"dtype":"BF16","shape":[2],"data_offsets":[0,4]}}   )";
  const std::string data = std::string("\x01\x02\x03\x04", 4) + std::string(16, '\x7f');
  const SafetensorsHeader h = header_of(header, data);
  CHECK(h.metadata == Json::object({{"format", "pt"}}));
  REQUIRE(h.tensors.size() == 2);
  CHECK(h.tensors[0].key == "b");
  CHECK(h.tensors[0].dtype->python_name() == "torch.float32");
  CHECK(h.tensors[0].shape == std::vector<std::int64_t>{2, 2});
  CHECK(h.tensors[0].numel == 4);
  CHECK(h.data_begin == 8 + header.size());
  CHECK(h.tensors[0].begin == h.data_begin + 4);
  CHECK(h.tensors[0].end == h.data_begin + 20);
  CHECK(h.tensors[1].key == "a.x");
  CHECK(h.tensors[1].dtype->python_name() == "torch.bfloat16");

  const auto file = safetensors_file(safetensors_with(header, data));
  const std::uint32_t expected = static_cast<std::uint32_t>(
      crc32(crc32(0L, Z_NULL, 0), reinterpret_cast<const Bytef*>(data.data()), 4));
  CHECK(crc32_of_range(*file, h.tensors[1].begin, h.tensors[1].end) == expected);
  CHECK(crc32_of_range(*file, h.tensors[1].begin, h.tensors[1].begin) == 0);
}

TEST_CASE("a safetensors header may be empty, hold scalars, empty tensors and every dtype") {
  CHECK(header_of("{}", "").tensors.empty());
  CHECK(header_of("{}", "").metadata.is_null());
  const SafetensorsHeader h = header_of(R"({"s":{"dtype":"I64","shape":[],"data_offsets":[0,8]},)"
                                        R"("e":{"dtype":"F16","shape":[0,3],"data_offsets":[8,8]},)"
                                        R"("f":{"dtype":"BOOL","shape":[0],"data_offsets":[8,8]}})",
                                        std::string(8, '\0'));
  CHECK(h.tensors[0].numel == 1);
  CHECK(h.tensors[0].shape.empty());
  CHECK(h.tensors[1].numel == 0);
  const std::pair<const char*, const char*> kCodes[] = {{"F64", "float64"},
                                                        {"F32", "float32"},
                                                        {"F16", "float16"},
                                                        {"BF16", "bfloat16"},
                                                        {"I64", "int64"},
                                                        {"I32", "int32"},
                                                        {"I16", "int16"},
                                                        {"I8", "int8"},
                                                        {"U8", "uint8"},
                                                        {"BOOL", "bool"},
                                                        {"U16", "uint16"},
                                                        {"U32", "uint32"},
                                                        {"U64", "uint64"},
                                                        {"C64", "complex64"},
                                                        {"F8_E5M2", "float8_e5m2"},
                                                        {"F8_E4M3", "float8_e4m3fn"}};
  for (const auto& [code, name] : kCodes) {
    const Dtype* dtype = dtype_of_safetensors(code);
    REQUIRE(dtype);
    CHECK(dtype->name == name);
    const std::string bytes(static_cast<std::size_t>(3 * dtype->element_size), 'x');
    const SafetensorsHeader one =
        header_of(std::string(R"({"t":{"dtype":")") + code + R"(","shape":[3],"data_offsets":[0,)" +
                      std::to_string(bytes.size()) + "]}}",
                  bytes);
    CHECK(one.tensors[0].dtype == dtype);
  }
}

TEST_CASE("every rule of the safetensors format is checked, naming the entry") {
  const std::string t4 = R"("dtype":"F32","shape":[1],"data_offsets")";
  const std::pair<std::string, std::string> kCases[] = {
      {refusal_of("\x02\0\0"), "shorter than the 8-byte length its header starts with"},
      {refusal_of(safetensors_with("{}", "", 100'000'001)),
       "its header of 100000001 bytes is larger than the format's limit of 100,000,000"},
      {refusal_of(safetensors_with("{}", "", 50)),
       "its header of 50 bytes runs past the end of the 10-byte file"},
      {refusal_of_header(" {}", ""), "its header does not begin with '{'"},
      {refusal_of_header("{", ""), "its header is not valid JSON (or not UTF-8)"},
      {refusal_of_header("{\"\xff\":1}", ""), "its header is not valid JSON (or not UTF-8)"},
      {refusal_of_header(R"({"a":{"dtype":"F32","shape":[[1]],"data_offsets":[0,4]}})", ""),
       "its header nests values deeper than the format's entries"},
      {refusal_of_header(R"({"a":{)" + t4 + R"(:[0,4]},"a":{)" + t4 + ":[4,8]}}",
                         std::string(8, 'x')),
       "its header names 'a' twice"},
      {refusal_of_header(R"({"a":[]})", ""), "tensor 'a' is not a JSON object"},
      {refusal_of_header(R"({"a":{"shape":[1],"data_offsets":[0,4]}})", "1234"),
       "tensor 'a' has no dtype"},
      {refusal_of_header(R"({"a":{"dtype":"F33","shape":[1],"data_offsets":[0,4]}})", "1234"),
       "tensor 'a' has dtype 'F33', which the format does not define"},
      {refusal_of_header(R"({"a":{"dtype":"F32","shape":[-1],"data_offsets":[0,4]}})", "1234"),
       "tensor 'a': dimension 0 of its shape is not a non-negative integer"},
      {refusal_of_header(R"({"a":{"dtype":"F32","shape":[1.5],"data_offsets":[0,4]}})", "1234"),
       "tensor 'a': dimension 0 of its shape is not a non-negative integer"},
      {refusal_of_header(
           R"({"a":{"dtype":"F32","shape":[4294967296,4294967296],"data_offsets":[0,4]}})", "1234"),
       "tensor 'a': its shape has more elements than 64 bits count"},
      {refusal_of_header(
           R"({"a":{"dtype":"F32","shape":[1,99999999999999999999],"data_offsets":[0,4]}})",
           "1234"),
       "tensor 'a': dimension 1 of its shape is past 64 bits"},
      {refusal_of_header(
           R"({"a":{"dtype":"F64","shape":[2305843009213693952],"data_offsets":[0,4]}})", "1234"),
       "tensor 'a' has 4 bytes of data; its 2305843009213693952 elements of float64 take more "
       "than 64 bits count"},
      {refusal_of_header(R"({"a":{)" + t4 + R"(:[0]}})", "1234"),
       "tensor 'a': its data_offsets is not an array of two integers"},
      {refusal_of_header(R"({"a":{)" + t4 + R"(:[4,0]}})", "1234"),
       "tensor 'a': its data_offsets end (0) before they begin (4)"},
      {refusal_of_header(R"({"a":{)" + t4 + R"(:[0,8]}})", "12345678"),
       "tensor 'a' has 8 bytes of data; its 1 elements of float32 take 4"},
      {refusal_of_header(R"({"a":{)" + t4 + R"(:[4,8]}})", "12345678"),
       "the data's bytes 0-4 belong to no tensor (a hole before tensor 'a')"},
      {refusal_of_header(R"({"a":{)" + t4 + R"(:[0,4]},"b":{)" + t4 + R"(:[2,6]}})", "123456"),
       "tensor 'b' (bytes 2-6) overlaps tensor 'a' (bytes 0-4)"},
      {refusal_of_header(R"({"a":{)" + t4 + R"(:[0,4]},"b":{)" + t4 + R"(:[0,4]}})", "1234"),
       "tensor 'b' (bytes 0-4) overlaps tensor 'a' (bytes 0-4)"},
      {refusal_of_header(R"({"a":{)" + t4 + R"(:[0,4]}})", "123456"),
       "the data's last 2 bytes belong to no tensor"},
      {refusal_of_header(R"({"a":{)" + t4 + R"(:[0,4]}})", "12"),
       "the tensors' bytes end at 4, past the data's 2 bytes (a file cut short)"},
      {refusal_of_header(R"({"__metadata__":[]})", ""), "__metadata__ is not a JSON object"},
      {refusal_of_header(R"({"__metadata__":{"epoch":3}})", ""),
       "__metadata__'s 'epoch' is not a string (the format's metadata maps strings to strings)"},
      {refusal_of_header(R"([1])", ""), "its header does not begin with '{'"},
  };
  for (const auto& [got, why] : kCases) CHECK(got == kPrefix + why);
}

TEST_CASE("a safetensors file whose length starts 0x80 or PK is read like any other") {
  // a header of 128 bytes (first byte 0x80) and one of 0x4b50 bytes (the bytes `PK`)
  for (const std::size_t length : {std::size_t{128}, std::size_t{0x4b50}}) {
    std::string header = R"({"w":{"dtype":"U8","shape":[3],"data_offsets":[0,3]}})";
    header.resize(length, ' ');
    const SafetensorsHeader h = header_of(header, "abc");
    CHECK(h.tensors.size() == 1);
    CHECK(h.data_begin == 8 + length);
  }
}
