#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <sstream>

#include "records_printing.h"
#include "vin/diagnostics/output/output_format.h"
#include "vin/diagnostics/records/error.h"
#include "vin/diagnostics/json/json_encoding.h"

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
  // as Python's json.dumps: control characters, non-ASCII, past U+FFFF as a surrogate pair
  CHECK(dump_line(Json("\x01\x1b\x7f\t\r\b\f\\")) == "\"\\u0001\\u001b\\u007f\\t\\r\\b\\f\\\\\"");
  CHECK(dump_line(Json("\xe2\x82\xac \xf0\x9f\x98\x80")) == R"("\u20ac \ud83d\ude00")");
  // a byte that is not UTF-8 as os.fsdecode's surrogateescape holds it: two such names differ
  CHECK(dump_line(Json(std::string("bad \xff byte"))) == R"("bad \udcff byte")");
  CHECK(dump_line(Json(std::string("a\xfe\xc3"))) == R"("a\udcfe\udcc3")");
  // an encoded surrogate and an overlong form are not UTF-8 either
  CHECK(dump_line(Json(std::string("\xed\xa0\x80\xc0\xaf"))) ==
        R"("\udced\udca0\udc80\udcc0\udcaf")");
  CHECK(dump_line(Json(std::numeric_limits<std::int64_t>::max())) == "9223372036854775807");
  CHECK(dump_line(Json(0.1450803279876709)) == "0.1450803279876709");
  CHECK(dump_line(Json(1.0)) == "1.0");
  CHECK(dump_line(Json(std::numeric_limits<std::uint64_t>::max())) == "18446744073709551615");
  CHECK(dump_line(Json(std::numeric_limits<std::int64_t>::min())) == "-9223372036854775808");
  CHECK(dump_record_line("R", Json::object()) == R"({"record": "R"})");
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

TEST_CASE("floats are printed as Python's repr") {
  CHECK(python_float_text(0.1) == "0.1");
  CHECK(python_float_text(1.0) == "1.0");
  CHECK(python_float_text(-0.0) == "-0.0");
  CHECK(python_float_text(1e16) == "1e+16");
  CHECK(python_float_text(1e15) == "1000000000000000.0");
  CHECK(python_float_text(123456789012345678.0) == "1.2345678901234568e+17");
  CHECK(python_float_text(0.0001) == "0.0001");
  CHECK(python_float_text(0.00001) == "1e-05");
  CHECK(python_float_text(1.5e300) == "1.5e+300");
  CHECK(python_float_text(5e-324) == "5e-324");
  CHECK(python_float_text(-2.5229237582082789e-228) == "-2.522923758208279e-228");
  CHECK(python_float_text(0.1450803279876709) == "0.1450803279876709");
  CHECK(python_float_text(65504.0) == "65504.0");
  CHECK(python_float_text(std::nan("")) == "NaN");
  CHECK(python_float_text(-std::numeric_limits<double>::infinity()) == "-Infinity");
}

TEST_CASE("TensorSnapshot and CaptureSummary records") {
  const TensorSnapshot s(
      "blocks.0", 2, Direction::output, {"output", "0"}, {2, 3}, "torch.float32", "cpu", 6, 16,
      {SampleValue(0.5), SampleValue(std::nan("")),
       SampleValue(std::numeric_limits<double>::infinity()), SampleValue(-1e-07)},
      std::nullopt);
  CHECK(
      dump_record_line("TensorSnapshot", to_json(s)) ==
      R"({"record": "TensorSnapshot", "module_path": "blocks.0", "call_index": 2, "direction": "output", "tensor_path": ["output", "0"], "shape": [2, 3], "dtype": "torch.float32", "device": "cpu", "numel": 6, "sampled_bytes": 16, "values": [0.5, "NaN", "Infinity", -1e-07], "sample_omission_reason": null})");
  const TensorSnapshot q("q", 0, Direction::input, {"args", "0"}, {4}, "torch.quint8", "cpu", 4, 0,
                         {}, std::string("quantized_dtype"));
  CHECK(
      dump_line(to_json(q)).find(R"("values": [], "sample_omission_reason": "quantized_dtype"})") !=
      std::string::npos);
  const TensorSnapshot ints("i", 0, Direction::input, {"args", "0"}, {2}, "torch.int64", "cpu", 2,
                            16, {SampleValue(std::int64_t{9007199254740993}), SampleValue(true)},
                            std::nullopt);
  CHECK(dump_line(to_json(ints)).find(R"("values": [9007199254740993, true])") !=
        std::string::npos);
  CHECK(s == s);
  CHECK(s != q);
  CHECK(
      dump_record_line(
          "CaptureSummary",
          to_json(CaptureSummary{5, 40, "max_bytes", false, std::nullopt, 0, 0, std::nullopt, 0, std::nullopt})) ==
      R"({"record": "CaptureSummary", "snapshots": 5, "sampled_bytes": 40, "stopped_by": "max_bytes"})");
  CHECK(dump_line(to_json(CaptureSummary{})) ==
        R"({"snapshots": 0, "sampled_bytes": 0, "stopped_by": null})");
  CaptureSummary saved;
  saved.saved = CaptureSummary::Saved{3, 120, 1};
  CHECK(dump_line(to_json(saved)) ==
        R"({"snapshots": 0, "sampled_bytes": 0, "stopped_by": null, "saved_tensors": 3, )"
        R"("saved_bytes": 120, "unsaved_tensors": 1})");
}

TEST_CASE("CaptureLimits: the defaults; non-positive quotas are rejected by name") {
  const CaptureLimits d;
  CHECK(d.max_tensors() == 64);
  CHECK(d.max_samples_per_tensor() == 32);
  CHECK(d.max_bytes() == 16384);
  CHECK(d.max_traversal_nodes() == 4096);
  CHECK(d.max_container_depth() == 32);
  CHECK(CaptureLimits() == d);
  CHECK_THROWS_WITH_AS(CaptureLimits().with_max_tensors(0), "max_tensors must be positive, got 0",
                       UsageError);
  CHECK_THROWS_WITH_AS(CaptureLimits().with_max_bytes(-5), "max_bytes must be positive, got -5",
                       UsageError);
  CaptureQuotas quotas;
  quotas.max_container_depth = 0;
  CHECK_THROWS_WITH_AS(CaptureLimits{quotas}, "max_container_depth must be positive, got 0",
                       UsageError);
}

TEST_CASE("compare's records: the keys a saved tensor's name carries, and the JSON field order") {
  const TensorKey key{"layer1.0.conv1", 3, Direction::output, {"output", "0", "a/b"}};
  // '/', '%' and control bytes inside a part are %XX: the parts split back apart
  CHECK(key.name() == "layer1.0.conv1/3/output/output/0/a%2Fb");
  const auto back = TensorKey::from_name(key.name());
  REQUIRE(back);
  CHECK(back->name() == key.name());
  CHECK(back->call_index == 3);
  CHECK(back->tensor_path == key.tensor_path);
  const TensorKey odd{"m", 0, Direction::input, {"kwargs", std::string("a\0b", 3), "50%", "\n"}};
  CHECK(odd.name() == "m/0/input/kwargs/a%00b/50%25/%0A");
  CHECK(TensorKey::from_name(odd.name())->tensor_path == odd.tensor_path);
  CHECK_FALSE(TensorKey::from_name("m/0/input/a%2"));
  CHECK_FALSE(TensorKey::from_name("m/0/input/a%zz"));
  CHECK_FALSE(TensorKey::from_name("arr_0"));
  CHECK_FALSE(TensorKey::from_name("m/x/input/args"));
  CHECK_FALSE(TensorKey::from_name("m/0/sideways/args"));
  TensorComparison c;
  c.key = key;
  c.only_in = "a";
  c.shape_a = std::vector<std::int64_t>{2};
  c.dtype_a = "torch.float32";
  c.numel = 2;
  CHECK(dump_line(to_json(c)) ==
        R"({"module_path": "layer1.0.conv1", "call_index": 3, "direction": "output", )"
        R"("tensor_path": ["output", "0", "a/b"], "shape_a": [2], "shape_b": null, )"
        R"("dtype_a": "torch.float32", "dtype_b": null, "numel": 2, "max_abs_error": null, )"
        R"("max_rel_error": null, "mismatches": null, "atol": 0.0, "rtol": 0.0, )"
        R"("within_tolerance": false, "only_in": "a", "statistics_only": false, )"
        R"("tensor_path_b": null, "structure_differs": false})");
  ComparisonSummary s;
  s.first_divergence = key;
  s.atol = 1.0;
  CHECK(dump_line(to_json(s)) ==
        R"({"pairs": 0, "within": 0, "beyond": 0, "only_in_a": 0, "only_in_b": 0, )"
        R"("structure_differences": 0, )"
        R"("first_divergence": {"module_path": "layer1.0.conv1", "call_index": 3, )"
        R"("direction": "output", "tensor_path": ["output", "0", "a/b"]}, "atol": 1.0, )"
        R"("rtol": null, "statistics_only": 0, "seed": 0})");
}
