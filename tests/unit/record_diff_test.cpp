#include <doctest/doctest.h>

#include <unistd.h>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>

#include "vin/diagnostics/diff/record_diff.h"
#include "vin/diagnostics/output/output_format.h"
#include "vin/diagnostics/records/error.h"

using namespace vin::diagnostics;

namespace {

using M = ModuleMetadata;

ModelMetadata old_model() {
  return ModelMetadata("pkg.Net", 30, 20,
                       {M("<root>", "pkg.Net", 0, 0, 0, true), M("a", "pkg.A", 10, 10, 0, true),
                        M("b", "pkg.B", 20, 10, 4, true)});
}

ModelMetadata new_model() {
  return ModelMetadata("pkg.Net", 40, 30,
                       {M("<root>", "pkg.Net", 0, 0, 0, false), M("b", "pkg.B", 20, 10, 4, true),
                        M("c", "pkg.C", 20, 20, 0, true)});
}

std::vector<std::string> lines(const std::vector<Change>& changes) {
  std::vector<std::string> out;
  for (const auto& c : changes)
    out.push_back(c.kind + " " + c.subject + " " + dump_line(c.path) + " " + dump_line(c.field) +
                  " " + dump_line(c.old_value) + " " + dump_line(c.new_value));
  return out;
}

std::string temp_file(const std::string& text) {
  char name[] = "/tmp/vin-diff-XXXXXX";
  const int fd = mkstemp(name);
  REQUIRE(fd >= 0);
  close(fd);
  std::ofstream(name) << text;
  return name;
}

std::string read_error(const std::string& text) {
  const std::string path = temp_file(text);
  try {
    read_record_file(path);
  } catch (const Error& e) {
    std::remove(path.c_str());
    return std::string(e.what()).substr(path.size());
  }
  std::remove(path.c_str());
  return "";
}

}  // namespace

TEST_CASE("model totals, then old items removed or changed, then new items added") {
  const auto changes =
      diff_records(record_set(old_model(), "old"), record_set(new_model(), "new"), {});
  CHECK(
      lines(changes) ==
      std::vector<std::string>{
          "changed model null \"total_parameters\" 30 40",
          "changed model null \"trainable_parameters\" 20 30",
          "changed module \"<root>\" \"training\" true false",
          R"(removed module "a" null {"path": "a", "module_type": "pkg.A", "direct_parameters": 10, "trainable_parameters": 10, "direct_buffers": 0, "training": true} null)",
          R"(added module "c" null null {"path": "c", "module_type": "pkg.C", "direct_parameters": 20, "trainable_parameters": 20, "direct_buffers": 0, "training": true})"});
  const auto ignoring = diff_records(record_set(old_model(), "old"), record_set(new_model(), "new"),
                                     {"training", "total_parameters"});
  CHECK(ignoring.size() == 3);
  CHECK(diff_records(record_set(old_model(), "x"), record_set(old_model(), "y"), {}).empty());
}

TEST_CASE("config fields are matched by path; values compare by their JSON text") {
  const ModelStructureSpec a(
      "m.C", std::nullopt,
      {ConfigFieldSpec({"lr"}, "float", "builtins.float", 1.0),
       ConfigFieldSpec({"n"}, std::nullopt, "builtins.float", std::nan(""))});
  const ModelStructureSpec b(
      "m.C", "m.Net",
      {ConfigFieldSpec({"lr"}, "float", "builtins.int", std::int64_t{1}),
       ConfigFieldSpec({"n"}, std::nullopt, "builtins.float", std::nan(""))});
  CHECK(lines(diff_records(record_set(a, "a"), record_set(b, "b"), {})) ==
        std::vector<std::string>{"changed config null \"target_type\" null \"m.Net\"",
                                 "changed field [\"lr\"] \"configured_type\" \"builtins.float\" "
                                 "\"builtins.int\"",
                                 "changed field [\"lr\"] \"value\" 1.0 1"});
  CHECK_THROWS_AS(diff_records(record_set(a, "a"), record_set(old_model(), "m"), {}), UsageError);
}

TEST_CASE("saved records read back into the same set") {
  std::ostringstream text;
  write_model_metadata(text, old_model(), OutputFormat::jsonl);
  const std::string path = temp_file(text.str());
  const RecordSet set = read_record_file(path);
  std::remove(path.c_str());
  CHECK(diff_records(set, record_set(old_model(), "mem"), {}).empty());
  CHECK(set.items.size() == 3);
}

TEST_CASE("files that are not inspect-model or inspect-config records") {
  CHECK(read_error("{\"record\": \"ModelMetadata\"\n") ==
        ":1: not a JSON line (diff reads the jsonl that inspect-model or inspect-config writes)");
  CHECK(read_error("[1, 2]\n") == ":1: a line without a \"record\" key");
  CHECK(read_error("{\"record\": \"TensorSnapshot\"}\n")
            .find(":1: starts with a TensorSnapshot record") == 0);
  CHECK(read_error("{\"record\": \"ModelMetadata\", \"model_type\": \"x\"}\n") ==
        ":1: a ModelMetadata without 'total_parameters'");
  CHECK(read_error("{\"record\": \"ModelStructureSpec\", \"config_type\": null, \"target_type\": "
                   "null}\n\n{\"record\": \"ModuleMetadata\"}\n") ==
        ":3: a ModuleMetadata record among ConfigFieldSpec records");
  CHECK(read_error("\n\n") == ": holds no records");
}
