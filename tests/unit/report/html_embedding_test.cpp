#include "vin/diagnostics/report/html_embedding.h"

#include <doctest/doctest.h>

#include <string>
#include <vector>

using namespace vin::diagnostics;
using nlohmann::json;

TEST_CASE("script_json: nothing can end the script element, and it parses back to the data") {
  const std::vector<std::string> hostile = {
      "</script><script>alert(1)</script>",
      "<img src=x onerror=alert(1)>",
      "<!--<script>",
      "a & b > c < d",
      "line\xe2\x80\xa8separator\xe2\x80\xa9paragraph",  // U+2028, U+2029: JavaScript newlines
      "\xe2\x80\xaeright-to-left",                       // U+202E
      "quote \" backslash \\ newline \n tab \t nul " + std::string(1, '\0'),
      std::string(100 * 1024, '<'),
  };
  json data = json::object();
  data["names"] = hostile;
  data["nested"] = {{"</script>", {{"k", "<b>&amp;</b>"}}}};
  const std::string text = script_json(data);
  CHECK(text.find('<') == std::string::npos);
  CHECK(text.find('>') == std::string::npos);
  CHECK(text.find('&') == std::string::npos);
  CHECK(text.find("\xe2\x80\xa8") == std::string::npos);
  CHECK(text.find("\xe2\x80\xa9") == std::string::npos);
  CHECK(text.find("\\u003c/script\\u003e") != std::string::npos);
  CHECK(json::parse(text) == data);
}

TEST_CASE("report_text shows bytes that are not UTF-8 as \\xNN, valid text as it is") {
  CHECK(report_text("layer1.0") == "layer1.0");
  CHECK(report_text("caf\xc3\xa9 \xe2\x80\xae") == "caf\xc3\xa9 \xe2\x80\xae");
  CHECK(report_text("bad\xff\xfe.x") == "bad\\xff\\xfe.x");
  CHECK(report_text("cut\xc3") == "cut\\xc3");
  CHECK(report_text("\xed\xa0\x80") == "\\xed\\xa0\\x80");  // an encoded surrogate
  // what report_text gives is valid UTF-8: it embeds and parses back
  const json data = report_text("\x80<\xff>");
  CHECK(json::parse(script_json(data)) == data);
}

TEST_CASE("csp_hash: 'sha256-' and the base64 of the source's SHA-256") {
  CHECK(csp_hash("") == "'sha256-47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU='");
  // the example of the CSP specification's hash-source section (MDN's too)
  CHECK(csp_hash("alert('Hello, world.');") ==
        "'sha256-qznLcsROx4GACP2dm0UCKCzCG+HiZ1guq6ZZDob/Tng='");
}
