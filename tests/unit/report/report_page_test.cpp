#include "vin/diagnostics/report/report_page.h"

#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "vin/diagnostics/container/input_file.h"
#include "vin/diagnostics/diff/saved_records.h"
#include "vin/diagnostics/records/error.h"
#include "vin/diagnostics/report/report_html.h"

using namespace vin::diagnostics;

namespace {

// Saved records as the tool reads them from a file
RecordSet records(const std::string& name, const std::string& jsonl) {
  return read_record_file(*InputFile::from_bytes(name, jsonl));
}

std::string module(const std::string& path, double flops, double time_ms, int parameters = 0) {
  return "{\"record\": \"ModuleProfile\", \"module_path\": \"" + path +
         "\", \"module_type\": \"T\", \"calls\": 1, \"parameters\": " +
         std::to_string(parameters) + ", \"input_shapes\": [[2, 3]], \"output_shapes\": [[2, 3]], "
         "\"flops\": " + std::to_string(static_cast<long long>(flops)) +
         ", \"macs\": 0, \"self_flops\": 0, \"time_ms\": " + std::to_string(time_ms) +
         ", \"self_time_ms\": 0, \"allocated_bytes\": 8, \"peak_bytes\": 8}\n";
}

std::string summary(int modules, const std::string& device = "cpu") {
  return "{\"record\": \"ProfileSummary\", \"device\": \"" + device +
         "\", \"device_name\": \"x\", \"threads\": {\"intra_op\": 1, \"inter_op\": 1}, \"mode\": "
         "\"eval\", \"runner\": \"torchscript\", \"warmup\": 1, \"runs\": 1, \"latency_ms\": "
         "{\"min\": 1, \"median\": 1, \"mean\": 1, \"p90\": 1, \"max\": 1}, \"throughput\": 1000, "
         "\"warnings\": [], \"flops\": 100, \"macs\": 50, \"uncounted_operators\": [], "
         "\"flops_complete\": true, \"instrumented_ms\": 1, \"overhead\": null, \"peak_bytes\": 8, "
         "\"parameter_bytes\": 0, \"buffer_bytes\": 0, \"modules\": " +
         std::to_string(modules) +
         ", \"operators\": 0, \"nested_operators\": false, \"inputs\": {\"shapes\": []}, \"seed\": "
         "0, \"torch_version\": \"2.6.0\", \"vin_inspect_version\": \"0.1.0\", \"schema_version\": "
         "1}\n";
}

std::size_t node_of(const Json& data, const std::string& path) {
  for (std::size_t i = 0; i < data["nodes"].size(); ++i)
    if (data["nodes"][i][0] == path) return i;
  FAIL("no node " << path);
  return 0;
}

}  // namespace

TEST_CASE("report_data: the tree, containers summed, (self) parts, values of each metric") {
  // blocks is a ModuleList: no record of its own
  const RecordSet side = records(
      "p.jsonl", module("<root>", 100, 10.0, 34) + module("blocks.0", 30, 3.0, 12) +
                     module("blocks.1", 40, 4.0, 12) + module("head", 20, 2.0, 6) + summary(4));
  const Json data = report_data({&side}, {});
  CHECK(data["kind"] == "profile");
  CHECK(data["compare"] == false);
  CHECK(data["metric"] == "flops");
  CHECK(data["title"] == "p.jsonl");
  CHECK(data["metrics"].size() == 4);
  const std::size_t blocks = node_of(data, "blocks");
  CHECK(data["nodes"][blocks][2] == 1);  // a container
  CHECK(data["nodes"][node_of(data, "head")][2] == 0);
  CHECK(data["nodes"][node_of(data, "blocks.1")][1] == blocks);  // its parent
  const Json& flops = data["values"]["flops"][0];
  CHECK(flops["total"][blocks] == 70.0);
  CHECK(flops["total"][0] == 100.0);
  CHECK(flops["self"][0] == 10.0);  // 100 - 70 - 20
  CHECK(flops["self"][blocks] == 0.0);
  CHECK(data["values"]["time"][0]["total"][blocks] == 7.0);
  CHECK(data["values"]["memory"][0]["total"][0] == 8.0);
  CHECK_FALSE(data.contains("changes"));
  CHECK(report_data({&side}, {"time", "My <b>model</b>", {}})["title"] == "My <b>model</b>");
}

TEST_CASE("report_data: children past their parent leave no (self) part") {
  const RecordSet side = records(
      "p.jsonl", module("<root>", 10, 1.0) + module("a", 8, 1.0) + module("b", 8, 1.0) + summary(3));
  const Json data = report_data({&side}, {});
  CHECK(data["values"]["flops"][0]["self"][0] == 0.0);
}

TEST_CASE("report_data: a comparison's change classes, counts and environment") {
  const RecordSet old_side =
      records("old.jsonl", module("<root>", 100, 10.0) + module("layer3", 40, 4.0) +
                               module("gone", 10, 1.0) + module("same", 20, 2.0) + summary(4));
  const RecordSet new_side = records(
      "new.jsonl", module("<root>", 150, 10.0) + module("layer3", 80, 4.1) +
                       module("same", 20, 1.0) + module("fresh", 10, 1.0) + summary(4, "cuda"));
  const Json data = report_data({&old_side, &new_side}, {});
  CHECK(data["compare"] == true);
  CHECK(data["title"] == "new.jsonl");
  const std::string changes = data["changes"]["flops"]["node"];
  CHECK(changes[0] == 'g');
  CHECK(changes[node_of(data, "layer3")] == 'g');
  CHECK(changes[node_of(data, "same")] == '=');
  CHECK(changes[node_of(data, "gone")] == 'r');
  CHECK(changes[node_of(data, "fresh")] == 'a');
  const Json& counts = data["changes"]["flops"]["counts"];  // the root is not counted
  CHECK(counts == Json{{"added", 1}, {"removed", 1}, {"grew", 1}, {"shrank", 0}, {"unchanged", 1}});
  CHECK(data["values"]["flops"][0]["total"][node_of(data, "fresh")].is_null());
  CHECK(data["values"]["flops"][1]["total"][node_of(data, "gone")].is_null());
  CHECK(data["environment_differs"] == Json::array({"device"}));
  // the NEW side's order first, then what only the OLD side has
  CHECK(node_of(data, "fresh") < node_of(data, "gone"));

  SUBCASE("--tolerance as diff reads it: within the limit is unchanged") {
    const Json tolerant =
        report_data({&old_side, &new_side}, {"time", "", DiffGate({}, {}, {"time_ms=5%"})});
    const std::string time = tolerant["changes"]["time"]["node"];
    CHECK(time[node_of(tolerant, "layer3")] == '=');  // 4.0 -> 4.1: 2.5%
    CHECK(time[node_of(tolerant, "same")] == 's');    // 2.0 -> 1.0: -50%
    const std::string strict = report_data({&old_side, &new_side}, {})["changes"]["time"]["node"];
    CHECK(strict[node_of(tolerant, "layer3")] == 'g');
  }
}

TEST_CASE("report_data: model records give the parameters view, summed down the tree") {
  const RecordSet model = records(
      "m.jsonl",
      "{\"record\": \"ModelMetadata\", \"model_type\": \"N\", \"total_parameters\": 18, "
      "\"trainable_parameters\": 18}\n"
      "{\"record\": \"ModuleMetadata\", \"path\": \"<root>\", \"module_type\": \"N\", "
      "\"direct_parameters\": 2, \"trainable_parameters\": 2, \"direct_buffers\": 0, \"training\": false}\n"
      "{\"record\": \"ModuleMetadata\", \"path\": \"blocks\", \"module_type\": \"L\", "
      "\"direct_parameters\": 0, \"trainable_parameters\": 0, \"direct_buffers\": 0, \"training\": false}\n"
      "{\"record\": \"ModuleMetadata\", \"path\": \"blocks.0\", \"module_type\": \"Linear\", "
      "\"direct_parameters\": 12, \"trainable_parameters\": 12, \"direct_buffers\": 0, \"training\": false}\n"
      "{\"record\": \"ModuleMetadata\", \"path\": \"blocks.1\", \"module_type\": \"Linear\", "
      "\"direct_parameters\": 4, \"trainable_parameters\": 4, \"direct_buffers\": 0, \"training\": false}\n");
  const Json data = report_data({&model}, {});
  CHECK(data["kind"] == "model");
  CHECK(data["metric"] == "parameters");
  CHECK(data["metrics"].size() == 1);
  const Json& parameters = data["values"]["parameters"][0];
  CHECK(parameters["total"][0] == 18.0);
  CHECK(parameters["total"][node_of(data, "blocks")] == 16.0);
  CHECK(parameters["self"][0] == 2.0);
  CHECK_THROWS_AS(report_data({&model}, {"time", "", {}}), UsageError);

  SUBCASE("a profile against model records is a usage error naming both") {
    const RecordSet profile = records("p.jsonl", module("<root>", 1, 1.0) + summary(1));
    try {
      report_data({&profile, &model}, {});
      FAIL("no error");
    } catch (const UsageError& e) {
      CHECK(std::string(e.what()).find("p.jsonl") != std::string::npos);
      CHECK(std::string(e.what()).find("m.jsonl") != std::string::npos);
    }
  }
}

TEST_CASE("report_data: what a report cannot be drawn from") {
  const RecordSet config = records(
      "c.jsonl",
      "{\"record\": \"ModelStructureSpec\", \"config_type\": \"x.C\", \"target_type\": \"x.Y\"}\n");
  CHECK_THROWS_WITH_AS(report_data({&config}, {}), doctest::Contains("c.jsonl"), Error);
  const RecordSet profile = records("p.jsonl", module("<root>", 1, 1.0) + summary(1));
  CHECK_THROWS_AS(report_data({&profile}, {"", "", DiffGate({}, {}, {"peak_bytes=5%"})}),
                  UsageError);
}

TEST_CASE("report_data: hostile names stay data; bytes not UTF-8 as \\xNN") {
  // the tool writes a byte that is not UTF-8 as Python's surrogateescape does: \udcff
  const RecordSet side = records(
      "p.jsonl", module("<root>", 10, 1.0) + module("</script><img src=x onerror=alert(1)>", 5, 1.0) +
                     module("bad\\udcff.x", 5, 1.0) + summary(3));
  const Json data = report_data({&side}, {});
  node_of(data, "</script><img src=x onerror=alert(1)>");
  node_of(data, "bad\\xff");  // a container: the record's prefix
  node_of(data, "bad\\xff.x");
  const std::string page = report_html(data);
  CHECK(page.find("</script><img") == std::string::npos);
  CHECK(page.find("\\u003c/script\\u003e\\u003cimg") != std::string::npos);
  // the CSP comes before any script, and the page's own parts stay within the budget (13.3)
  CHECK(page.find("Content-Security-Policy") < page.find("<script"));
  CHECK(report_asset_bytes() < 40000);
}
