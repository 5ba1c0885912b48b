#include <doctest/doctest.h>

#include <string>

#include "vin/diagnostics/pickle_rewrite.h"

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
