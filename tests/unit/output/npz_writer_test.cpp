#include <doctest/doctest.h>

#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>

#include "vin/diagnostics/npy/npy_reader.h"
#include "vin/diagnostics/output/npz_writer.h"
#include "vin/diagnostics/records/error.h"

using namespace vin::diagnostics;

namespace {

std::string temp_path() {
  char name[] = "/tmp/vin-npz-XXXXXX";
  const int fd = mkstemp(name);
  REQUIRE(fd >= 0);
  close(fd);
  std::remove(name);
  return std::string(name) + ".npz";
}

}  // namespace

TEST_CASE("npy headers are numpy's format 1.0, 64-byte aligned") {
  const std::string h = npy_header("<f4", {2, 3});
  CHECK(h.size() % 64 == 0);
  CHECK(h.substr(0, 8) == std::string("\x93NUMPY\x01\x00", 8));
  CHECK(h.find("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }") == 10);
  CHECK(h.back() == '\n');
  CHECK(npy_header("|b1", {5}).find("'shape': (5,), }") != std::string::npos);
  CHECK(npy_header("<i8", {}).find("'shape': (), }") != std::string::npos);
}

TEST_CASE("an .npz written member by member reads back with the project's reader") {
  const std::string path = temp_path();
  const float f[] = {1.5f, -2.0f, 3.25f, 0.0f, 7.0f, -1.0f};
  const std::int64_t i[] = {1, -2, 3};
  const bool b[] = {true, false};
  {
    NpzWriter writer(path);
    writer.add("layer1.0.conv1/0/output/output", NpyView{"<f4", {2, 3}, f, sizeof f});
    writer.add("<root>/0/input/args/0", NpyView{"<i8", {3}, i, sizeof i});
    writer.add("flag", NpyView{"|b1", {2}, b, sizeof b});
    writer.add("empty", NpyView{"<f4", {0, 4}, nullptr, 0});
    writer.finish();
  }
  const auto arrays = read_npz_file(path);
  std::remove(path.c_str());
  REQUIRE(arrays.size() == 4);
  CHECK(arrays[0].name == "layer1.0.conv1/0/output/output");
  CHECK(arrays[0].dtype_name() == "float32");
  CHECK(arrays[0].shape == std::vector<std::int64_t>{2, 3});
  CHECK(std::memcmp(arrays[0].data.data(), f, sizeof f) == 0);
  CHECK(arrays[1].name == "<root>/0/input/args/0");
  CHECK(arrays[1].dtype_name() == "int64");
  CHECK(std::memcmp(arrays[1].data.data(), i, sizeof i) == 0);
  CHECK(arrays[2].dtype_name() == "bool");
  CHECK(arrays[3].numel() == 0);
}

TEST_CASE("an .npz abandoned before finish() leaves no file") {
  const std::string path = temp_path();
  const float f[] = {1.0f};
  {
    NpzWriter writer(path);
    writer.add("a", NpyView{"<f4", {1}, f, sizeof f});
  }
  std::ifstream in(path);
  CHECK_FALSE(in.good());
}

TEST_CASE("a write to a full device fails with the device named") {
  if (access("/dev/full", W_OK) != 0) return;
  const float f[1024] = {};
  CHECK_THROWS_WITH_AS(
      [&] {
        NpzWriter writer("/dev/full");
        writer.add("a", NpyView{"<f4", {1024}, f, sizeof f});
        writer.finish();
      }(),
      "/dev/full: write failed: No space left on device", Error);
}
