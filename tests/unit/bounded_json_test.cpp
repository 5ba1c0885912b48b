// parse_bounded_json: the one JSON parser for what the tool reads (records/bounded_json.h).
#include <doctest/doctest.h>

#include <string>

#include "vin/diagnostics/records/bounded_json.h"
#include "vin/diagnostics/records/json_encoding.h"

using namespace vin::diagnostics;

TEST_CASE("a value nested past the bound is refused while parsing, however deep") {
  const auto nested = [](std::size_t depth) {
    return std::string(depth, '[') + "1" + std::string(depth, ']');
  };
  CHECK(parse_bounded_json(nested(64), 64).is_array());
  CHECK_THROWS_AS(parse_bounded_json(nested(65), 64), JsonTooDeep);
  // a million levels: refused at the bound, not after building (or crashing on) the rest
  CHECK_THROWS_AS(parse_bounded_json(nested(1000000), 64), JsonTooDeep);
  // a deep value followed by a sibling key
  const std::string sibling =
      "{\"deep\": " + std::string(100000, '[') + std::string(100000, ']') + ", \"next\": 1}";
  CHECK_THROWS_AS(parse_bounded_json(sibling, 4064), JsonTooDeep);
}

TEST_CASE("the DOM is Json::parse's, with integers past 64 bits kept as their digits") {
  const Json j = parse_bounded_json(
      R"({"a": 1, "b": [true, null, 2.5], "a": 3, "big": 18446744073709551617})", 8);
  CHECK(dump_line(j) == R"({"a": 3, "b": [true, null, 2.5], "big": 18446744073709551617})");
  CHECK(is_big_integer(j["big"]));
  CHECK(j["big"] != Json("18446744073709551617"));
  CHECK(dump_line(parse_bounded_json("-18446744073709551617", 1)) == "-18446744073709551617");
  CHECK_THROWS_AS(parse_bounded_json("{\"a\": ", 8), Json::parse_error);
}
