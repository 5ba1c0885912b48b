#include <doctest/doctest.h>
#include <zlib.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "vin/diagnostics/pickle/saved_tensor.h"

using namespace vin::diagnostics;

namespace {

// a storage of `n` float32 elements 0, 1, 2, ... as little-endian bytes
std::string float_storage(int n) {
  std::string bytes(static_cast<std::size_t>(n) * 4, '\0');
  for (int i = 0; i < n; ++i) {
    const float f = static_cast<float>(i);
    std::memcpy(&bytes[static_cast<std::size_t>(i) * 4], &f, 4);
  }
  return bytes;
}

SavedTensor tensor(std::vector<std::int64_t> shape, std::vector<std::int64_t> strides,
                   std::int64_t offset, int storage_numel, const char* dtype = "float32") {
  SavedTensor t;
  t.dtype = dtype_named(dtype);
  t.shape = std::move(shape);
  t.strides = std::move(strides);
  t.offset = offset;
  t.storage_numel = storage_numel;
  t.numel = 1;
  for (const std::int64_t n : t.shape) t.numel *= n;
  return t;
}

// the CRC-32 of the float32 values `values`, little-endian
std::uint32_t crc_of(const std::vector<float>& values) {
  std::string bytes(values.size() * 4, '\0');
  if (!values.empty()) std::memcpy(bytes.data(), values.data(), bytes.size());
  return static_cast<std::uint32_t>(
      crc32_z(0, reinterpret_cast<const Bytef*>(bytes.data()), bytes.size()));
}

}  // namespace

TEST_CASE("elements_crc32 reads a tensor's elements in row-major order where they lie") {
  const std::string storage = float_storage(12);
  const InputFilePtr file = InputFile::from_bytes("storage", storage);
  StorageBytes bytes{file.get(), 0, storage.size(), 0x12345678u, false};

  SUBCASE("a tensor that is its whole storage: the record's CRC, read for free") {
    CHECK(elements_crc32(tensor({3, 4}, {4, 1}, 0, 12), bytes) == 0x12345678u);
  }
  SUBCASE("without a recorded CRC: the bytes'") {
    bytes.crc.reset();
    CHECK(elements_crc32(tensor({3, 4}, {4, 1}, 0, 12), bytes) ==
          crc_of({0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}));
  }
  SUBCASE("a view from an offset") {
    CHECK(elements_crc32(tensor({2, 2}, {2, 1}, 6, 12), bytes) == crc_of({6, 7, 8, 9}));
  }
  SUBCASE("a transposed matrix") {
    CHECK(elements_crc32(tensor({4, 3}, {1, 4}, 0, 12), bytes) ==
          crc_of({0, 4, 8, 1, 5, 9, 2, 6, 10, 3, 7, 11}));
  }
  SUBCASE("columns of a slice, dimensions of size 1 and a step") {
    CHECK(elements_crc32(tensor({3, 1, 2}, {4, 7, 1}, 1, 12), bytes) ==
          crc_of({1, 2, 5, 6, 9, 10}));
    CHECK(elements_crc32(tensor({4}, {3}, 0, 12), bytes) == crc_of({0, 3, 6, 9}));
  }
  SUBCASE("a long run read straight from the file, then nothing gathered after it") {
    // a piece's worth of bytes or more: the CRC of the run is kept (an empty last piece once
    // reset it, when the CRC was zlib's, whose CRC of a null buffer is its initial value)
    const std::string big = float_storage(40000);
    const InputFilePtr big_file = InputFile::from_bytes("big", big);
    const StorageBytes big_bytes{big_file.get(), 0, big.size(), std::nullopt, false};
    std::vector<float> first(20000);
    for (int i = 0; i < 20000; ++i) first[static_cast<std::size_t>(i)] = static_cast<float>(i);
    CHECK(elements_crc32(tensor({100, 200}, {200, 1}, 0, 40000), big_bytes) == crc_of(first));
  }
  SUBCASE("a broadcast (stride 0) repeats an element") {
    CHECK(elements_crc32(tensor({3}, {0}, 5, 12), bytes) == crc_of({5, 5, 5}));
  }
  SUBCASE("no elements: the CRC of nothing") {
    CHECK(elements_crc32(tensor({0, 4}, {4, 1}, 0, 12), bytes) == 0u);
  }
  SUBCASE("a scalar") { CHECK(elements_crc32(tensor({}, {}, 3, 12), bytes) == crc_of({3})); }
}

TEST_CASE("add_elements_crc32 asks a batch for each tensor's CRC, the same as alone") {
  const std::string storage = float_storage(12);
  const InputFilePtr file = InputFile::from_bytes("storage", storage);
  const StorageBytes recorded{file.get(), 0, storage.size(), 0x12345678u, false};
  const StorageBytes unrecorded{file.get(), 0, storage.size(), std::nullopt, false};
  Crc32Batch batch;
  const auto storage_crc = batch.range(*file, 0, storage.size());
  const auto whole = add_elements_crc32(batch, tensor({3, 4}, {4, 1}, 0, 12), recorded);
  // a legacy storage's CRC the batch computes: the tensor that is all of it takes that ticket
  const auto legacy =
      add_elements_crc32(batch, tensor({12}, {1}, 0, 12), unrecorded, storage_crc);
  CHECK(legacy == storage_crc);
  const auto view = add_elements_crc32(batch, tensor({2, 2}, {2, 1}, 6, 12), recorded, storage_crc);
  const auto transposed = add_elements_crc32(batch, tensor({4, 3}, {1, 4}, 0, 12), unrecorded);
  const auto none = add_elements_crc32(batch, tensor({0}, {1}, 0, 12), unrecorded);
  batch.run();
  CHECK(batch.value(whole) == 0x12345678u);
  CHECK(batch.value(legacy) == crc_of({0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}));
  CHECK(batch.value(view) == crc_of({6, 7, 8, 9}));
  CHECK(batch.value(transposed) == crc_of({0, 4, 8, 1, 5, 9, 2, 6, 10, 3, 7, 11}));
  CHECK(batch.value(none) == 0u);
}

TEST_CASE("elements_crc32 reverses each element of a big-endian storage") {
  std::string storage = float_storage(4);
  for (std::size_t i = 0; i < storage.size(); i += 4)
    std::reverse(storage.begin() + static_cast<std::ptrdiff_t>(i),
                 storage.begin() + static_cast<std::ptrdiff_t>(i + 4));
  const InputFilePtr file = InputFile::from_bytes("storage", storage);
  const StorageBytes bytes{file.get(), 0, storage.size(), 0u, true};
  CHECK(elements_crc32(tensor({4}, {1}, 0, 4), bytes) == crc_of({0, 1, 2, 3}));
  CHECK(elements_crc32(tensor({2}, {2}, 1, 4), bytes) == crc_of({1, 3}));
}

TEST_CASE("bytes_reached and storage_problem bound a tensor by its storage") {
  CHECK(bytes_reached(tensor({3, 4}, {4, 1}, 0, 12)) == 48u);
  CHECK(bytes_reached(tensor({4, 3}, {1, 4}, 2, 12)) == 56u);
  CHECK(bytes_reached(tensor({0}, {1}, 100, 12)) == 0u);
  CHECK_FALSE(bytes_reached(tensor({2}, {-1}, 0, 12)));
  CHECK_FALSE(bytes_reached(tensor({2, 2}, {INT64_MAX, 1}, 0, 12)));
  CHECK(contiguous_strides({2, 3, 4}) == std::vector<std::int64_t>{12, 4, 1});
  CHECK_FALSE(storage_problem("data/0", *dtype_named("float32"), 10, 40));
  const auto short_by_one = storage_problem("data/0", *dtype_named("float32"), 10, 39);
  REQUIRE(short_by_one);
  CHECK(*short_by_one == "data/0 holds 39 bytes, fewer than the 10 float32 elements of its storage");
}
