#include <doctest/doctest.h>

#include <limits>
#include <sstream>

#include "records_printing.h"
#include "vin/diagnostics/error.h"
#include "vin/diagnostics/json_encoding.h"
#include "vin/diagnostics/output_format.h"

using namespace vin::diagnostics;

namespace {

ModelMetadata small_model() {
  return ModelMetadata(
      "pkg.Net", 34, 28,
      {ModuleMetadata("<root>", "pkg.Net", 0, 0, 0, false),
       ModuleMetadata("norm", "torch.nn.modules.batchnorm.BatchNorm1d", 4, 4, 5, true)});
}

}  // namespace

TEST_CASE("lines are written with Python's json.dumps separators and escapes") {
  Json j;
  j["b"] = 1;
  j["a"] = Json::array({1, 2.5, "x", nullptr, true});
  j["nested"] = Json::object({{"k", Json::array()}});
  CHECK(dump_line(j) == R"({"b": 1, "a": [1, 2.5, "x", null, true], "nested": {"k": []}})");
  CHECK(dump_line(Json("µ\"\n")) == R"("\u00b5\"\n")");
  CHECK(dump_line(Json(std::string("bad \xff byte"))) == R"("bad \ufffd byte")");
  CHECK(dump_line(Json(std::numeric_limits<std::int64_t>::max())) == "9223372036854775807");
  CHECK(dump_line(Json(0.1450803279876709)) == "0.1450803279876709");
  CHECK(dump_line(Json(1.0)) == "1.0");
}

TEST_CASE("ModelMetadata in jsonl: header line, then one line per module") {
  std::ostringstream out;
  write_model_metadata(out, small_model(), OutputFormat::jsonl);
  CHECK(
      out.str() ==
      R"({"record": "ModelMetadata", "model_type": "pkg.Net", "total_parameters": 34, "trainable_parameters": 28})"
      "\n"
      R"({"record": "ModuleMetadata", "path": "<root>", "module_type": "pkg.Net", "direct_parameters": 0, "trainable_parameters": 0, "direct_buffers": 0, "training": false})"
      "\n"
      R"({"record": "ModuleMetadata", "path": "norm", "module_type": "torch.nn.modules.batchnorm.BatchNorm1d", "direct_parameters": 4, "trainable_parameters": 4, "direct_buffers": 5, "training": true})"
      "\n");
}

TEST_CASE("ModelMetadata in json: one document with the modules inside, no record keys") {
  std::ostringstream out;
  write_model_metadata(out, small_model(), OutputFormat::json);
  const Json doc = Json::parse(out.str());
  CHECK(doc.size() == 4);
  CHECK(doc.begin().key() == "model_type");
  CHECK(doc["total_parameters"] == 34);
  CHECK(doc["trainable_parameters"] == 28);
  REQUIRE(doc["modules"].size() == 2);
  CHECK(doc["modules"][1]["path"] == "norm");
  CHECK(doc["modules"][1]["direct_buffers"] == 5);
  CHECK(!doc["modules"][1].contains("record"));
  CHECK(out.str().back() == '\n');
  CHECK(out.str().find("\n  \"modules\": [\n    {\n      \"path\": \"<root>\",") !=
        std::string::npos);
}

TEST_CASE("output formats are parsed strictly") {
  CHECK(parse_output_format("jsonl") == OutputFormat::jsonl);
  CHECK(parse_output_format("json") == OutputFormat::json);
  CHECK(parse_output_format("table") == OutputFormat::table);
  CHECK_THROWS_AS(parse_output_format("JSON"), UsageError);
  CHECK_THROWS_AS(parse_output_format(""), UsageError);
}

TEST_CASE("records compare by value") {
  CHECK(small_model() == small_model());
  const ModelMetadata other(
      "pkg.Net", 34, 28,
      {ModuleMetadata("<root>", "pkg.Net", 0, 0, 0, true),
       ModuleMetadata("norm", "torch.nn.modules.batchnorm.BatchNorm1d", 4, 4, 5, true)});
  CHECK(small_model() != other);
  CHECK(ModuleMetadata("a", "T", 1, 1, 0, true) != ModuleMetadata("a", "T", 1, 0, 0, true));
}
