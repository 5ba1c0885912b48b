#include "vin/diagnostics/container/crc32.h"

#include <doctest/doctest.h>
#include <zlib.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <random>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "vin/diagnostics/records/error.h"

using namespace vin::diagnostics;

namespace {

// zlib's CRC-32, the value the contract names, as the reference
std::uint32_t zlib_crc(std::string_view bytes) {
  return static_cast<std::uint32_t>(
      crc32_z(0, reinterpret_cast<const Bytef*>(bytes.data()), bytes.size()));
}

std::string random_bytes(std::size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::string out(n, '\0');
  for (char& c : out) c = static_cast<char>(rng());
  return out;
}

}  // namespace

TEST_CASE("crc32_update gives zlib's CRC-32, in one call or many") {
  for (const std::size_t n : {0, 1, 3, 15, 16, 17, 255, 4096, 100003}) {
    CAPTURE(n);
    const std::string bytes = random_bytes(n, static_cast<unsigned>(n));
    CHECK(crc32_update(0, bytes.data(), n) == zlib_crc(bytes));
    const std::size_t half = n / 3;
    CHECK(crc32_update(crc32_update(0, bytes.data(), half), bytes.data() + half, n - half) ==
          zlib_crc(bytes));
  }
  CHECK(crc32_update(0, "123456789", 9) == 0xcbf43926u);  // CRC-32's check value
  // no bytes leave the CRC as it is (zlib's crc32 answers a null buffer with 0)
  CHECK(crc32_update(0xcbf43926u, nullptr, 0) == 0xcbf43926u);
}

TEST_CASE("crc32_join gives the CRC of two byte runs one after the other") {
  const std::string a = random_bytes(1000, 1), b = random_bytes(777, 2);
  CHECK(crc32_join(zlib_crc(a), zlib_crc(b), b.size()) == zlib_crc(a + b));
  CHECK(crc32_join(0, zlib_crc(b), b.size()) == zlib_crc(b));  // after nothing
  CHECK(crc32_join(zlib_crc(a), 0, 0) == zlib_crc(a));          // then nothing
}

TEST_CASE("Crc32Batch computes each CRC asked for, as computed alone, on every core") {
  // more than two pieces: the range is split, checksummed on several workers and joined
  const std::string big = random_bytes(2 * Crc32Batch::kPieceBytes + 12345, 7);
  const InputFilePtr file = InputFile::from_bytes("big", big);
  Crc32Batch batch;
  const auto whole = batch.range(*file, 0, big.size());
  const auto known = batch.known(0xdeadbeefu);
  const auto inner = batch.range(*file, 1000, Crc32Batch::kPieceBytes + 1001);  // across a piece
  const auto empty = batch.range(*file, 50, 50);
  const auto computed = batch.computed([] { return 42u; });
  std::vector<Crc32Batch::Ticket> small;
  for (std::size_t i = 0; i < 200; ++i) small.push_back(batch.range(*file, i * 97, i * 97 + i));
  batch.run();
  CHECK(batch.value(whole) == zlib_crc(big));
  CHECK(batch.value(known) == 0xdeadbeefu);
  CHECK(batch.value(inner) ==
        zlib_crc(std::string_view(big).substr(1000, Crc32Batch::kPieceBytes + 1)));
  CHECK(batch.value(empty) == 0u);
  CHECK(batch.value(computed) == 42u);
  for (std::size_t i = 0; i < small.size(); ++i)
    CHECK(batch.value(small[i]) == zlib_crc(std::string_view(big).substr(i * 97, i)));
  CHECK(crc32_of_range(*file, 3, big.size() - 3) ==
        zlib_crc(std::string_view(big).substr(3, big.size() - 6)));
}

TEST_CASE("Crc32Batch throws the first failure in the order asked, after every worker stops") {
  const std::string bytes = random_bytes(1000, 3);
  const InputFilePtr file = InputFile::from_bytes("short.bin", bytes);
  SUBCASE("a range past the file's end names the file") {
    Crc32Batch batch;
    batch.range(*file, 0, 10);
    batch.range(*file, 500, 2000);
    CHECK_THROWS_WITH_AS(batch.run(), "short.bin: ends before byte 2000 (cut short while read)",
                         Error);
  }
  SUBCASE("of two failures, the one asked for first, whichever worker met it first") {
    std::atomic<bool> second_thrown{false};
    Crc32Batch batch;
    batch.computed([&]() -> std::uint32_t {
      // where two workers run, the later failure is met first (waited for up to a second)
      const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(1);
      while (!second_thrown && std::chrono::steady_clock::now() < until) std::this_thread::yield();
      throw Error("first");
    });
    batch.computed([&]() -> std::uint32_t {
      second_thrown = true;
      throw std::runtime_error("second");
    });
    for (int i = 0; i < 20; ++i) batch.computed([] { return 1u; });
    CHECK_THROWS_WITH_AS(batch.run(), "first", Error);
  }
}

TEST_CASE("Crc32Batch starts a worker a core, at most kMaxWorkers and one a piece") {
  CHECK(Crc32Batch::workers_for(0) == 1);
  CHECK(Crc32Batch::workers_for(1) == 1);
  CHECK(Crc32Batch::workers_for(1000) >= 1);
  CHECK(Crc32Batch::workers_for(1000) <= Crc32Batch::kMaxWorkers);
  CHECK(Crc32Batch::workers_for(2) <= 2);
}
