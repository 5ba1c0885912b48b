#include <doctest/doctest.h>

#include <string>

#include "vin/diagnostics/pickle/pickle_reader.h"
#include "vin/diagnostics/torchscript/torchscript_literal.h"

using namespace vin::diagnostics;

TEST_CASE("string literals decode as TorchScript prints them, octal escapes included") {
  using namespace std::string_literals;
  // how `torch.jit.script` printed `raise ValueError('a\x00b\x01c\x7fd')` into code/
  CHECK(decode_string_literal(R"("a\000b\001c\177d")") == "a\0b\001c\177d"s);
  CHECK(decode_string_literal(R"("\033[1m")") == "\033[1m"s);
  CHECK(decode_string_literal(R"('q\'z')") == "q'z");
  CHECK(decode_string_literal(R"("q\"z\\\n\t")") == "q\"z\\\n\t");
  // fewer than three digits, and a digit after three, as Python reads them
  CHECK(decode_string_literal(R"("\0x")") == "\0x"s);
  CHECK(decode_string_literal(R"("\0001")") == "\0"s + "1");
  CHECK_THROWS_AS(decode_string_literal(R"("\400")"), UnsupportedPickle);
  CHECK_THROWS_AS(decode_string_literal(R"("\q")"), UnsupportedPickle);
  CHECK_THROWS_AS(decode_string_literal(R"("open)"), UnsupportedPickle);
  CHECK_THROWS_AS(decode_string_literal(R"("a"b")"), UnsupportedPickle);
  CHECK_THROWS_AS(decode_string_literal(R"("ends in\")"), UnsupportedPickle);
}

TEST_CASE("a literal's string value keeps its control bytes") {
  const ArchiveConstant none = [](std::size_t) -> Json { return nullptr; };
  CHECK(parse_torchscript_literal(R"("tab\011end")", none) == Json("tab\tend"));
}
