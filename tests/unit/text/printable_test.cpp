#include <doctest/doctest.h>

#include "vin/diagnostics/text/printable.h"

using vin::diagnostics::printable;

TEST_CASE("printable keeps text and escapes what a terminal should not get") {
  CHECK(printable("plain text: ok") == "plain text: ok");
  CHECK(printable("µ and ✓ stay") == "µ and ✓ stay");
  CHECK(printable("line\nbreak\ttab") == "line\\x0abreak\\x09tab");
  CHECK(printable(std::string("nul\0byte", 8)) == "nul\\x00byte");
  CHECK(printable("bad \xff\xfe utf-8") == "bad \\xff\\xfe utf-8");
  CHECK(printable("cut \xe2\x9c") == "cut \\xe2\\x9c");            // truncated sequence
  CHECK(printable("overlong \xc0\xaf") == "overlong \\xc0\\xaf");  // overlong '/'
  CHECK(printable("surrogate \xed\xa0\x80") == "surrogate \\xed\\xa0\\x80");
  CHECK(printable("\x1b[31mred") == "\\x1b[31mred");
}

TEST_CASE("printable cuts long text without splitting a character or an escape") {
  CHECK(printable("abcdef", 4) == "abcd...");
  CHECK(printable("ab\x01", 4) == "ab...");
  CHECK(printable("aµµ", 4) == "aµ...");
  CHECK(printable("abcd", 4) == "abcd");
}
