#include <doctest/doctest.h>

#include <algorithm>
#include <string>

#include "vin/diagnostics/container/input_file.h"
#include "vin/diagnostics/container/sha256.h"

using namespace vin::diagnostics;

namespace {

std::string sha256_text(const std::string& text, std::size_t piece) {
  Sha256 hash;
  for (std::size_t at = 0; at < text.size(); at += piece)
    hash.update(text.data() + at, std::min(piece, text.size() - at));
  return hash.hex();
}

}  // namespace

TEST_CASE("SHA-256 gives FIPS 180-4's test vectors, in one piece or many") {
  const std::string two_blocks = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
  for (const std::size_t piece : {std::size_t{1}, std::size_t{7}, std::size_t{64}, std::size_t{1000}}) {
    CAPTURE(piece);
    CHECK(sha256_text("", piece) ==
          "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    CHECK(sha256_text("abc", piece) ==
          "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    CHECK(sha256_text(two_blocks, piece) ==
          "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  }
  CHECK(sha256_text(std::string(1000000, 'a'), 4096) ==
        "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
  // the padding's edge: 55, 56 and 64 bytes
  CHECK(sha256_text(std::string(55, 'a'), 64) ==
        "9f4390f8d30c2dd92ec9f095b65e2b9ae9b0a925a5258e241c9f1e910f734318");
  CHECK(sha256_text(std::string(56, 'a'), 64) ==
        "b35439a4ac6f0948b6d6f9e3c6af0f5f590ce20f1bde7090ef7970686ec6738a");
  CHECK(sha256_text(std::string(64, 'a'), 64) ==
        "ffe054fe7ae0cb6dc65c3af9b61d5209f439851db43d0ba5997337df154668eb");
  CHECK(sha256_of(*InputFile::from_bytes("abc.bin", "abc")) ==
        "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}
