// The record field tables (record_fields.h) against what they feed: the JSON encoding's keys,
// diff's key lists, and docs/records.md, which must name every field of every record.
#include <doctest/doctest.h>

#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "vin/diagnostics/json/json_encoding.h"
#include "vin/diagnostics/json/record_fields.h"

using namespace vin::diagnostics;

namespace {

std::string read_docs() {
  std::ifstream in(VIN_SOURCE_DIR "/docs/records.md");
  REQUIRE(in);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// The bullets of docs/records.md ("- " at the start of a line, up to the next bullet, blank line
// or heading), each joined into one line.
std::vector<std::string> bullets(const std::string& docs) {
  std::vector<std::string> out;
  std::istringstream lines(docs);
  std::string line;
  bool open = false;
  while (std::getline(lines, line)) {
    if (line.rfind("- ", 0) == 0) {
      out.push_back(line);
      open = true;
    } else if (line.empty() || line[0] == '#' || line[0] == '|') {
      open = false;
    } else if (open) {
      out.back() += " " + line;
    }
  }
  return out;
}

bool names(const std::string& text, const std::string& name) {
  return text.find("`" + name + "`") != std::string::npos ||
         text.find("\"" + name + "\"") != std::string::npos;
}

std::vector<std::string> keys(const Json& object) {
  std::vector<std::string> out;
  for (const auto& [key, value] : object.items()) out.push_back(key);
  return out;
}

std::vector<std::string> field_names(const char* record, bool with_details) {
  std::vector<std::string> out;
  for (const FieldInfo& f : record_info(record).fields)
    if (with_details || f.presence == Presence::always) out.push_back(f.name);
  return out;
}

}  // namespace

TEST_CASE("docs/records.md names every field of every record, the always-present ones in order") {
  const std::string docs = read_docs();
  const std::vector<std::string> all_bullets = bullets(docs);
  for (const RecordInfo& info : record_infos()) {
    const std::string record = info.record;
    CAPTURE(record);
    const std::string tag = "`" + std::string(info.record) + "`";
    std::string about;    // every bullet that names the record
    std::string primary;  // the one that starts with it: "- `ModuleMetadata`: ..."
    for (const std::string& b : all_bullets) {
      if (b.find(tag) == std::string::npos) continue;
      about += b + "\n";
      if (b.rfind("- " + tag, 0) == 0 && primary.empty()) primary = b;
    }
    REQUIRE_MESSAGE(!about.empty(), "no bullet of docs/records.md names ", info.record);
    std::size_t at = 0;
    for (const FieldInfo& field : info.fields) {
      const std::string name = field.name;
      CAPTURE(name);
      CHECK_MESSAGE(names(about, field.name), "docs/records.md does not name the field");
      if (primary.empty() || field.presence != Presence::always) continue;
      const std::size_t found = primary.find("`" + std::string(field.name) + "`", at);
      CHECK_MESSAGE(found != std::string::npos, "out of order or missing in: ", primary);
      if (found != std::string::npos) at = found;
    }
  }
}

TEST_CASE("docs/records.md's table of what a profile diff compares is the compared fields") {
  const std::string docs = read_docs();
  const auto row = [&](const std::string& subject) {
    const std::regex line("\\| " + subject + " \\| [^|]* \\| ([^|\\n]*)\\|");
    std::smatch m;
    REQUIRE_MESSAGE(std::regex_search(docs, m, line), "no row for ", subject);
    std::vector<std::string> fields;
    const std::regex field("`([a-z_]+)`");
    const std::string cell = m[1];
    for (auto it = std::sregex_iterator(cell.begin(), cell.end(), field);
         it != std::sregex_iterator(); ++it)
      fields.push_back((*it)[1]);
    return fields;
  };
  const auto compared_except = [](const char* record, const std::string& key) {
    std::vector<std::string> out;
    for (const char* name : compared_fields(record))
      if (name != key) out.emplace_back(name);
    return out;
  };
  CHECK(row("`profile`") == compared_except("ProfileSummary", ""));
  std::vector<std::string> environment;
  for (const char* name : environment_fields("ProfileSummary")) environment.emplace_back(name);
  CHECK(row("`profile` \\(environment\\)") == environment);
  CHECK(row("`module` \\(profile\\)") == compared_except("ModuleProfile", "module_path"));
  CHECK(row("`operator`") == compared_except("OperatorProfile", "operator"));
}

TEST_CASE("the JSON encoding writes the tables' fields in their order") {
  ModuleProfile module;  // uncalled_children and called_instead: only where a child did not run
  module.module_path = "layer1";
  module.uncalled_children = {"aux"};
  CHECK(keys(to_json(module)) == field_names("ModuleProfile", true));
  CHECK(keys(to_json(OperatorProfile{})) == field_names("OperatorProfile", true));
  ProfileSummary overflowed;  // flops_overflowed is there only then
  overflowed.flops = kFlopsOverflowed;
  CHECK(keys(to_json(overflowed)) == field_names("ProfileSummary", true));
  CHECK(keys(to_json(TensorComparison{})) == field_names("TensorComparison", true));
  CHECK(keys(to_json(ComparisonSummary{})) == field_names("ComparisonSummary", true));
  TensorMetadata weights_tensor;  // key, file and data_crc32: a weights file's tensors only
  weights_tensor.key = "fc.weight";
  weights_tensor.file = "model-00001-of-00002.safetensors";
  weights_tensor.data_crc32 = "00000000";
  CHECK(keys(to_json(weights_tensor)) == field_names("TensorMetadata", true));
  CHECK(keys(to_json(TensorMetadata{})) == field_names("TensorMetadata", false));
  CHECK(keys(to_json(WeightsFile{})) == field_names("WeightsFile", true));
  Change gated;  // within_tolerance is there only for a field with a --tolerance
  gated.within_tolerance = true;
  CHECK(keys(to_json(gated)) == field_names("Change", true));
  CHECK(keys(to_json(DiffSummary{})) == field_names("DiffSummary", true));

  SUBCASE("a capture summary has its detail fields only with --stats, --save or a --seed") {
    CaptureSummary summary;
    CHECK(keys(to_json(summary)) == field_names("CaptureSummary", false));
    summary.with_stats = true;
    summary.saved.emplace();
    summary.seed = 5;
    summary.runner = "export_graph";  // a .pt2's
    CHECK(keys(to_json(summary)) == field_names("CaptureSummary", true));
  }
}

TEST_CASE(
    "a record read back must have the fields every record of its kind has that diff compares") {
  const auto as_strings = [](const std::vector<const char*>& names) {
    return std::vector<std::string>(names.begin(), names.end());
  };
  CHECK(as_strings(required_fields("ModelMetadata")) ==
        std::vector<std::string>{"model_type", "total_parameters", "trainable_parameters"});
  CHECK(as_strings(required_fields("ModuleProfile")) ==
        std::vector<std::string>{"module_path", "calls", "parameters", "input_shapes",
                                 "output_shapes", "flops", "self_flops"});
  CHECK(as_strings(required_fields("ProfileSummary")) ==
        std::vector<std::string>{"flops", "parameter_bytes", "buffer_bytes"});
  CHECK_THROWS_AS(record_info("NoSuchRecord"), std::logic_error);
}
