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

TEST_CASE("a byte written as a lone surrogate (surrogateescape) reads back as the byte") {
  // what json_encoding writes for a file name that is not UTF-8, and Python's json.dumps of
  // os.fsdecode(b"a\xff.pt")
  const std::string name = "a\xff\x80\xc0.pt";
  const Json j = parse_bounded_json(dump_line(Json::object({{name, name}})), 8);
  CHECK(j.begin().key() == name);
  CHECK(j[name] == Json(name));
  CHECK(parse_bounded_json(R"("\udcFE")", 1) == Json(std::string("\xfe")));
  // a real surrogate pair, an escaped backslash before `udc..`, and other text stay as they are
  CHECK(parse_bounded_json(R"(["\ud83d\ude00", "\\udcff", "\udcff"])", 2) ==
        Json::array({"\xf0\x9f\x98\x80", "\\udcff", std::string("\xff")}));
  // lone surrogates outside surrogateescape's range are still refused, as nlohmann refuses them
  CHECK_THROWS_AS(parse_bounded_json(R"("\udc10")", 1), Json::parse_error);
  CHECK_THROWS_AS(parse_bounded_json(R"("\ud800")", 1), Json::parse_error);
  CHECK_THROWS_AS(parse_bounded_json(R"("\udcff)", 1), Json::parse_error);
}
