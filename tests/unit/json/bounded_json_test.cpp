// parse_bounded_json: the one JSON parser for what the tool reads (records/bounded_json.h), and
// scan_json_object, which reads record lines as it does without building them.
#include <doctest/doctest.h>

#include <random>
#include <string>
#include <vector>

#include "../fuzz/json_scan_parity.h"

#include "vin/diagnostics/json/bounded_json.h"
#include "vin/diagnostics/json/json_encoding.h"

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
  // the escape's case does not matter, alone or beside others (a value parsed alone, as diff
  // parses a field, reads as it does in its line: found by the records fuzzer)
  CHECK(parse_bounded_json(R"("a\uDcff")", 1) == Json(std::string("a\xff")));
  CHECK(parse_bounded_json(R"(["\udC80", "\uDCfe"])", 2) ==
        Json::array({std::string("\x80"), std::string("\xfe")}));
  // lone surrogates outside surrogateescape's range are still refused, as nlohmann refuses them
  CHECK_THROWS_AS(parse_bounded_json(R"("\udc10")", 1), Json::parse_error);
  CHECK_THROWS_AS(parse_bounded_json(R"("\ud800")", 1), Json::parse_error);
  CHECK_THROWS_AS(parse_bounded_json(R"("\udcff)", 1), Json::parse_error);
}

// scan_json_object: the same texts as parse_bounded_json, members as their texts.

TEST_CASE("the record-line scanner accepts exactly what the parser accepts") {
  const std::vector<std::string> texts = {
      // objects, members, repeated keys, nesting at and past the bound
      R"({"record": "ModuleMetadata", "path": "a.b", "n": 1, "n": 2})",
      R"({ "a" : [ 1 , { "b" : null } ] , "c":true,"d":false })", "{}", " {}\r", "{\"a\":{}}",
      "{" + std::string(63, '[') + std::string(63, ']') + "}",
      "{\"a\": " + std::string(64, '[') + std::string(64, ']') + "}",
      "{\"a\": " + std::string(64, '[') + "1" + std::string(64, ']') + "}",
      "{\"a\": " + std::string(200, '[') + "}",  // too deep before it is found broken
      "{\"a\": [1,]}", "{\"a\" 1}", "{\"a\": 1,}", "{,}", "{\"a\": 1} x", "{\"a\": 1}}", "{",
      "", "   ", "[1, 2]", "\"text\"", "12", "null", "nul", "tru", "{'a': 1}", "{a: 1}",
      // numbers: the grammar, 64 bits and past, doubles that are infinite
      R"({"n": -0, "m": 0.5e-3, "k": 1E+2, "big": 18446744073709551617, "neg": -9223372036854775809})",
      "{\"n\": 01}", "{\"n\": 1.}", "{\"n\": .5}", "{\"n\": 1e}", "{\"n\": -}", "{\"n\": +1}",
      "{\"n\": 1e400}", "{\"n\": -1e400}", "{\"n\": 1e-400}", "{\"n\": 0.0000001e310}",
      "{\"n\": " + std::string(308, '9') + "}", "{\"n\": " + std::string(309, '9') + "}",
      "{\"n\": " + std::string(400, '1') + "}", "{\"n\": " + std::string(400, '1') + ".5e-200}",
      "{\"n\": NaN}", "{\"n\": Infinity}", "{\"n\": 1.5e99999999999999999999}",
      // strings: escapes, surrogates, surrogateescape's bytes, UTF-8, control characters
      R"({"s": "\" \\ \/ \b \f \n \r \t \u0041 \u00e9 \ud83d\ude00"})", R"({"s": "\x"})",
      R"({"s": "\u12"})", R"({"s": "\u12G4"})", R"({"s": "\ud800"})", R"({"s": "\ud800\u0041"})",
      R"({"s": "\udc10"})", R"({"s": "\udc80\udcff"})", R"({"s": "\ud800\udc80"})",
      R"({"\udcff": 1, "\u0000": 2})", "{\"s\": \"a\tb\"}", "{\"s\": \"a\x01\"}",
      "{\"s\": \"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80 \xf4\x8f\xbf\xbf\"}",
      "{\"s\": \"\xc3\"}", "{\"s\": \"\xc0\x80\"}", "{\"s\": \"\xe0\x80\x80\"}",
      "{\"s\": \"\xed\xa0\x80\"}", "{\"s\": \"\xf4\x90\x80\x80\"}", "{\"s\": \"\xff\"}",
      "{\"s\": \"\x7f\"}", "{\"s\": \"unterminated}", std::string("{\"s\": 1}\0", 9),
      "{\"\xef\xbb\xbf\": 1}", "\xef\xbb\xbf{}"};
  for (const std::string& text : texts) {
    CAPTURE(text);
    CHECK(vin::test::json_scan_disagreement(text) == std::nullopt);
  }
  // the members as texts, in order, every one handed out
  std::vector<std::string> seen;
  CHECK(scan_json_object(R"({"a": [1, 2], "b" :"x" , "a": {"c": null}})", 64,
                         [&](std::string_view k, std::string_view v) {
                           seen.push_back(std::string(k) + "=" + std::string(v));
                         }) == JsonScan::object);
  CHECK(seen == std::vector<std::string>{R"("a"=[1, 2])", R"("b"="x")", R"("a"={"c": null})"});
  CHECK(json_string_value(R"("a\u002eb\udcff")") == std::string("a.b\xff"));
  CHECK(is_plain_json_string(R"("layer1.0.conv1")"));
  CHECK(!is_plain_json_string(R"("caf\u00e9")"));
  CHECK(!is_plain_json_string("\"caf\xc3\xa9\""));
  CHECK(!is_plain_json_string("12"));
}

TEST_CASE("the record-line scanner and the parser agree on 200,000 mutated record lines") {
  // records of every kind diff reads, each byte mutated, inserted or cut at random (seeded)
  const std::vector<std::string> seeds = {
      R"({"record": "ModuleMetadata", "path": "blocks.0.layer1", "module_type": "torch.nn.Linear", "direct_parameters": 10, "training": false, "attributes": {"in_features": 4, "name": "caf\u00e9", "t": {"type_marker": "x.Y"}}})",
      R"({"record": "ModuleProfile", "module_path": "<root>", "calls": 1, "input_shapes": [[1, 16]], "flops": 18446744073709551617, "time_ms": 0.0123, "latency_ms": {"min": 1e-05, "max": 2.5E+3}})",
      R"({"record": "ConfigFieldSpec", "path": ["a", "b\"c"], "value": [null, true, -0.5, "\ud83d\ude00", "\udcff"]})",
  };
  const std::string alphabet = "{}[]\":,\\ \t\r-+.0123456789eEtrufalsn\x01\x7f\xc3\xa9\xed\xf4\x80\xbfu";
  std::mt19937 random(20261205);
  std::size_t disagreements = 0;
  for (int run = 0; run < 200000; ++run) {
    std::string text = seeds[run % seeds.size()];
    const int edits = 1 + static_cast<int>(random() % 4);
    for (int e = 0; e < edits && !text.empty(); ++e) {
      const std::size_t at = random() % text.size();
      const char c = alphabet[random() % alphabet.size()];
      switch (random() % 3) {
        case 0: text[at] = c; break;
        case 1: text.insert(text.begin() + static_cast<std::ptrdiff_t>(at), c); break;
        default: text.erase(at, 1 + random() % 3); break;
      }
    }
    if (const auto wrong = vin::test::json_scan_disagreement(text, 3)) {
      if (++disagreements <= 5) {
        CAPTURE(text);
        CHECK(*wrong == "");
      }
    }
  }
  CHECK(disagreements == 0);
}
