#include <doctest/doctest.h>

#include <string>

#include "vin/diagnostics/pickle_rewrite.h"
#include "vin/diagnostics/pickle_safety.h"

using vin::diagnostics::pickle_problem;
using vin::diagnostics::rewrite_single_item_opcodes;

namespace {

// (a hex escape swallows every hex digit after it: "\x00" "aq" keeps the 'a' a letter)
std::string bytes(const char* text, std::size_t n) { return std::string(text, n); }
#define BYTES(literal) bytes(literal, sizeof(literal) - 1)

}  // namespace

TEST_CASE("SETITEM and APPEND become MARK ... SETITEMS / APPENDS") {
  // pickle.dumps({'a': 1}, protocol=2)
  CHECK(rewrite_single_item_opcodes(BYTES("\x80\x02}q\x00X\x01\x00\x00\x00"
                                          "aq\x01K\x01s.")) ==
        BYTES("\x80\x02}q\x00(X\x01\x00\x00\x00"
              "aq\x01K\x01u."));
  // pickle.dumps([5], protocol=2)
  CHECK(rewrite_single_item_opcodes(BYTES("\x80\x02]q\x00K\x05"
                                          "a.")) == BYTES("\x80\x02]q\x00(K\x05"
                                                          "e."));
  // pickle.dumps({'k': [1]}, protocol=2): the MARK goes before the key, the value nests
  CHECK(rewrite_single_item_opcodes(BYTES("\x80\x02}q\x00X\x01\x00\x00\x00"
                                          "kq\x01]q\x02K\x01"
                                          "as.")) == BYTES("\x80\x02}q\x00(X\x01\x00\x00\x00"
                                                           "kq\x01]q\x02(K\x01"
                                                           "eu."));
  // pickle.dumps(({'x': (1,)},), protocol=2): a TUPLE1 value
  CHECK(rewrite_single_item_opcodes(
            BYTES("\x80\x02}q\x00X\x01\x00\x00\x00xq\x01K\x01\x85q\x02s\x85q\x03.")) ==
        BYTES("\x80\x02}q\x00(X\x01\x00\x00\x00xq\x01K\x01\x85q\x02u\x85q\x03."));
}

TEST_CASE("pickles with nothing to rewrite, or with unknown opcodes, are left alone") {
  // pickle.dumps({'a': 1, 'b': 2}, protocol=2) already uses SETITEMS
  CHECK(
      !rewrite_single_item_opcodes(BYTES("\x80\x02}q\x00(X\x01\x00\x00\x00"
                                         "aq\x01K\x01X\x01\x00\x00\x00"
                                         "bq\x02K\x02u.")));
  CHECK(!rewrite_single_item_opcodes(BYTES("\x80\x04\x95\x05\x00\x00\x00\x00\x00\x00\x00}s.")));
  CHECK(!rewrite_single_item_opcodes(BYTES("s.")));                 // SETITEM on an empty stack
  CHECK(!rewrite_single_item_opcodes(BYTES("X\xff\xff\xff\x7f")));  // a length past the end
  CHECK(!rewrite_single_item_opcodes(""));
}

TEST_CASE("sizes LibTorch's unpickler would trust are checked first (torch_save_fuzzer)") {
  // a well-formed pickle: {'a': 1} as protocol 2
  const std::string fine = BYTES(
      "\x80\x02}q\x00X\x01\x00\x00\x00"
      "aq\x01K\x01s.");
  CHECK_FALSE(pickle_problem(fine).has_value());
  // LONG_BINPUT 1,668,546,927: LibTorch would size its memo table for that many entries
  const std::string memo = BYTES("\x80\x02]r\x6f\x01\x74\x63.");
  CHECK(pickle_problem(memo) ==
        std::optional<std::string>("memo index 1668546927 at byte 3 is larger than a pickle of "
                                   "9 bytes can use"));
  // BINUNICODE claiming 4 GiB with 1 byte behind it
  const std::string text(
      "\x80\x02X\xff\xff\xff\xff"
      "a.",
      9);
  CHECK(pickle_problem(text) ==
        std::optional<std::string>("a length of 4294967295 bytes at byte 2 runs past the end "
                                   "of the pickle"));
  // truncated or unknown: left to LibTorch, which refuses those without allocating
  CHECK_FALSE(pickle_problem(std::string("\x80\x02X\xff", 4)).has_value());
  CHECK_FALSE(pickle_problem(std::string("\x80\x02\xfe", 3)).has_value());
}

TEST_CASE("stack shapes LibTorch's unpickler would pop blindly are refused (torch_save_fuzzer)") {
  // EMPTY_LIST, MARK, GLOBAL, APPENDS, then BUILD with one value left: LibTorch pops two
  const std::string build = BYTES("\x80\x02](cm\nf\nebN.");
  CHECK(
      pickle_problem(build) ==
      std::optional<std::string>("opcode 0x62 at byte 10 needs 2 value(s) on the stack, finds 1"));
  CHECK(pickle_problem(BYTES("\x80\x02K\x01t.")) ==
        std::optional<std::string>("opcode 0x74 at byte 4 needs a MARK, and none is open"));
  // fixed pops do not reach below the last MARK
  CHECK(pickle_problem(BYTES("\x80\x02K\x01(\x85.")) ==
        std::optional<std::string>("opcode 0x85 at byte 5 needs 1 value(s) on the stack, finds 0"));
  CHECK(pickle_problem(BYTES("\x80\x02.")) ==
        std::optional<std::string>("opcode 0x2e at byte 2 needs 1 value(s) on the stack, finds 0"));
  // what pickle.dumps writes passes: {'a': [1, (2, 3)]}
  CHECK_FALSE(pickle_problem(BYTES("\x80\x02}q\x00X\x01\x00\x00\x00"
                                   "aq\x01]q\x02(K\x01K\x02K\x03\x86q\x03"
                                   "es."))
                  .has_value());
}
