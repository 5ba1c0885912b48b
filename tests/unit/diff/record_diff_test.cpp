#include <doctest/doctest.h>

#include <unistd.h>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <limits>
#include <sstream>

#include "vin/diagnostics/diff/record_diff.h"
#include "vin/diagnostics/output/diff_markdown.h"
#include "vin/diagnostics/output/output_format.h"
#include "vin/diagnostics/records/error.h"
#include "vin/diagnostics/json/exact_integer.h"

using namespace vin::diagnostics;

namespace {

using M = ModuleMetadata;

// diff leaving out `fields`, as --ignore does
DiffGate ignoring(std::vector<std::string> fields) { return DiffGate(std::move(fields), {}, {}); }

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
      diff_records(record_set(old_model(), "old"), record_set(new_model(), "new"), DiffGate())
          .changes;
  CHECK(
      lines(changes) ==
      std::vector<std::string>{
          "changed model null \"total_parameters\" 30 40",
          "changed model null \"trainable_parameters\" 20 30",
          "changed module \"<root>\" \"training\" true false",
          R"(removed module "a" null {"path": "a", "module_type": "pkg.A", "direct_parameters": 10, "trainable_parameters": 10, "direct_buffers": 0, "training": true} null)",
          R"(added module "c" null null {"path": "c", "module_type": "pkg.C", "direct_parameters": 20, "trainable_parameters": 20, "direct_buffers": 0, "training": true})"});
  const auto without = diff_records(record_set(old_model(), "old"), record_set(new_model(), "new"),
                                    ignoring({"training", "total_parameters"}));
  CHECK(without.changes.size() == 3);
  CHECK(diff_records(record_set(old_model(), "x"), record_set(old_model(), "y"), DiffGate())
            .changes.empty());
  CHECK(diff_records(record_set(old_model(), "x"), record_set(old_model(), "y"), DiffGate())
            .compared == std::vector<std::string>{"model", "modules"});
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
  CHECK(lines(diff_records(record_set(a, "a"), record_set(b, "b"), DiffGate()).changes) ==
        std::vector<std::string>{"changed config null \"target_type\" null \"m.Net\"",
                                 "changed field [\"lr\"] \"configured_type\" \"builtins.float\" "
                                 "\"builtins.int\"",
                                 "changed field [\"lr\"] \"value\" 1.0 1"});
  CHECK_THROWS_AS(diff_records(record_set(a, "a"), record_set(old_model(), "m"), DiffGate()),
                  UsageError);
}

TEST_CASE("saved records read back into the same set") {
  std::ostringstream text;
  write_model_metadata(text, old_model(), OutputFormat::jsonl);
  const std::string path = temp_file(text.str());
  const RecordSet set = read_record_file(path);
  std::remove(path.c_str());
  CHECK(diff_records(set, record_set(old_model(), "mem"), DiffGate()).changes.empty());
  CHECK(set.items.size() == 3);
}

TEST_CASE("files that are not inspect-model or inspect-config records") {
  CHECK(read_error("{\"record\": \"ModelMetadata\"\n") ==
        ": neither jsonl records nor a JSON document (diff reads what inspect-model, "
        "inspect-config or profile writes with --format jsonl or json)");
  CHECK(read_error("[1, 2]\n") ==
        ": a JSON document that is not inspect-model's, inspect-config's or profile's (--format "
        "json)");
  CHECK(read_error("{\"record\": \"ModelMetadata\", \"model_type\": \"x\", \"total_parameters\": "
                   "1, \"trainable_parameters\": 1}\n{\"oops\n") ==
        ":2: not a JSON line (diff reads the jsonl or json that inspect-model, inspect-config or "
        "profile writes)");
  CHECK(read_error("{\"record\": \"TensorSnapshot\"}\n")
            .find(":1: starts with a TensorSnapshot record") == 0);
  CHECK(read_error("{\"record\": \"ModelMetadata\", \"model_type\": \"x\"}\n") ==
        ":1: a ModelMetadata without 'total_parameters'");
  CHECK(read_error("{\"record\": \"ModelStructureSpec\", \"config_type\": null, \"target_type\": "
                   "null}\n\n{\"record\": \"ModuleMetadata\"}\n") ==
        ":3: a ModuleMetadata record among ConfigFieldSpec records");
  CHECK(read_error("\n\n") == ": holds no records");
}

namespace {

ProfileRecords profile_of(std::int64_t hidden, double ms) {
  const FlopCount flops = static_cast<FlopCount>(96 * hidden);
  ProfileRecords p;
  ModuleProfile root{"<root>", "pkg.Net", 1,  10 * hidden, {{2, 8}}, {{2, 4}},
                     flops,    0,         ms, ms / 4,      512,      256, {}, {}};
  ModuleProfile lin{"lin",    "torch.nn.modules.linear.Linear",
                    1,        10 * hidden,
                    {{2, 8}}, {{2, hidden}},
                    flops,    flops,
                    ms / 2,   ms / 2,
                    256,      128,
                    {},       {}};
  p.modules = {root, lin};
  p.operators = {OperatorProfile{"aten::linear", 1, flops, ms / 3},
                 OperatorProfile{"aten::relu", 2, 0, ms / 5}};
  p.summary.device = ms > 1 ? "cuda:0" : "cpu";
  p.summary.runs = 10;
  p.summary.latency_ms = {ms, ms, ms, ms, ms};
  p.summary.flops = 96 * hidden;
  p.summary.instrumented_ms = ms * 2;
  p.summary.peak_bytes = static_cast<std::int64_t>(ms * 1000);
  p.summary.parameter_bytes = 40 * hidden;
  p.summary.modules = 2;
  p.summary.operators = 2;
  return p;
}

RecordSet profile_set_of(const ProfileRecords& p, OutputFormat format) {
  std::ostringstream text;
  write_profile(text, p, format);
  const std::string path = temp_file(text.str());
  RecordSet set = read_record_file(path);
  std::remove(path.c_str());
  return set;
}

}  // namespace

TEST_CASE("profile records: only what does not depend on the machine is compared") {
  // the same model on another machine: other times, memory, device; jsonl against json
  const RecordSet here = profile_set_of(profile_of(4, 0.5), OutputFormat::jsonl);
  const RecordSet there = profile_set_of(profile_of(4, 7.25), OutputFormat::json);
  CHECK(here.kind == RecordSet::Kind::profile);
  CHECK(here.items.size() == 2);
  CHECK(here.operators.size() == 2);
  const RecordDiff same = diff_records(here, there, DiffGate());
  // the device is what they were measured on: an environment change, which does not count
  CHECK(lines(same.changes) ==
        std::vector<std::string>{"environment profile null \"device\" \"cpu\" \"cuda:0\""});
  CHECK_FALSE(same.changes[0].counts());
  CHECK(diff_records(here, there, ignoring({"device"})).changes.empty());
  CHECK(same.compared == std::vector<std::string>{"profile", "modules", "operators"});
  // a wider Linear: its FLOPs, parameters and shapes
  const RecordSet wider = profile_set_of(profile_of(6, 0.5), OutputFormat::jsonl);
  CHECK(lines(diff_records(here, wider, DiffGate()).changes) ==
        std::vector<std::string>{
            "changed profile null \"flops\" 384 576",
            "changed profile null \"macs\" 192 288",
            "changed profile null \"parameter_bytes\" 160 240",
            "changed module \"<root>\" \"parameters\" 40 60",
            "changed module \"<root>\" \"flops\" 384 576",
            "changed module \"<root>\" \"macs\" 192 288",
            "changed module \"lin\" \"parameters\" 40 60",
            "changed module \"lin\" \"output_shapes\" [[2, 4]] [[2, 6]]",
            "changed module \"lin\" \"flops\" 384 576",
            "changed module \"lin\" \"macs\" 192 288",
            "changed module \"lin\" \"self_flops\" 384 576",
            "changed operator \"aten::linear\" \"flops\" 384 576",
            "changed operator \"aten::linear\" \"macs\" 192 288",
        });
  CHECK(diff_records(
            here, wider,
            ignoring({"flops", "macs", "self_flops", "parameters", "parameter_bytes",
                      "output_shapes"}))
            .changes.empty());
  // a profile against a model is a usage error
  CHECK_THROWS_AS(diff_records(here, record_set(old_model(), "mem"), DiffGate()), UsageError);
}

TEST_CASE("profile record files cut short or out of order are refused, naming the line") {
  std::ostringstream text;
  write_profile(text, profile_of(4, 0.5), OutputFormat::jsonl);
  std::string jsonl = text.str();
  const std::string without_summary = jsonl.substr(0, jsonl.rfind("{\"record\": \"ProfileSummary"));
  CHECK(read_error(without_summary) ==
        ": profile records without their ProfileSummary (cut short?)");
  CHECK(read_error(jsonl + "{\"record\": \"ModuleProfile\"}\n") ==
        ":6: a ModuleProfile record after the ProfileSummary");
  CHECK(read_error("{\"record\": \"ModuleProfile\", \"module_path\": \"a\"}\n") ==
        ":1: a ModuleProfile without 'calls'");
  CHECK(read_error(without_summary + "{\"record\": \"ModelMetadata\"}\n") ==
        ":5: a ModelMetadata record among profile records");
  // a module path that is not a string names the file
  CHECK(read_error("{\"record\": \"ModuleProfile\", \"module_path\": [1], \"calls\": 1, "
                   "\"parameters\": 0, \"input_shapes\": [], \"output_shapes\": [], \"flops\": 0, "
                   "\"self_flops\": 0}\n{\"record\": \"ProfileSummary\", \"flops\": 0, "
                   "\"parameter_bytes\": 0, \"buffer_bytes\": 0, \"modules\": 1, "
                   "\"operators\": 0}\n") == ": a ModuleProfile whose module_path is not a string");
  // the summary counts the records before it: lines lost from the front or middle, or added
  const std::string summary = jsonl.substr(without_summary.size());
  CHECK(read_error(summary) ==
        ": the ProfileSummary counts 2 modules and 2 operators, the file holds 0 and 0 (cut "
        "short, or edited?)");
  const std::string first_module = jsonl.substr(0, jsonl.find('\n') + 1);
  CHECK(read_error(first_module + jsonl) ==
        ": the ProfileSummary counts 2 modules and 2 operators, the file holds 3 and 2 (cut "
        "short, or edited?)");
  CHECK(read_error(jsonl.substr(0, jsonl.rfind("\"modules\": 2")) + "\"modules\": 3, " +
                   jsonl.substr(jsonl.rfind("\"operators\": 2"))) ==
        ": the ProfileSummary counts 3 modules and 2 operators, the file holds 2 and 2 (cut "
        "short, or edited?)");
}

TEST_CASE("a side holding two records of one module, operator or field is refused, named") {
  // counts that agree do not make an edited file right: the first record would hide the second
  std::ostringstream text;
  write_profile(text, profile_of(4, 0.5), OutputFormat::jsonl);
  std::string edited = text.str();
  const std::size_t second = edited.find('\n') + 1;
  edited.replace(second, edited.find('\n', second) + 1 - second, edited.substr(0, second));
  const std::string path = temp_file(edited);
  const RecordSet twice = read_record_file(path);
  std::remove(path.c_str());
  const RecordSet once = profile_set_of(profile_of(4, 0.5), OutputFormat::jsonl);
  for (const auto& [a, b] : {std::pair{&once, &twice}, std::pair{&twice, &once}}) {
    try {
      diff_records(*a, *b, DiffGate());
      FAIL("no error");
    } catch (const Error& e) {
      CHECK(std::string(e.what()) == path +
                                         ": two module records for \"<root>\"; a record file "
                                         "holds one each (edited, or two files joined?)");
    }
  }
  // inspect-model records alike
  ModelMetadata model = old_model();
  auto modules = model.modules();
  modules.push_back(modules[1]);
  const ModelMetadata doubled("pkg.Net", 30, 20, modules);
  CHECK_THROWS_WITH_AS(
      diff_records(record_set(old_model(), "old"), record_set(doubled, "new"), DiffGate()),
      "new: two module records for \"a\"; a record file holds one each "
      "(edited, or two files joined?)",
      Error);
}

TEST_CASE("diff's table writes any saved value, whatever its JSON type") {
  RecordSet a, b;
  a.source = "a.jsonl";
  b.source = "b.jsonl";
  const std::vector<Change> changes = {
      {"added", "field", Json::array({1, Json::object({{"k", 2}})}), Json(), Json(), Json(3)},
      {"changed", "module", Json::array({Json::array()}), "flops",
       Json::object({{"type_marker", 1}}), Json(2)},
      {"removed", "operator", Json(7), Json(), Json(1), Json()}};
  std::ostringstream out;
  CHECK_NOTHROW(write_diff(out, a, b, changes, {"profile"}, OutputFormat::table));
  CHECK(out.str().find("field 1.{\"k\": 2}") != std::string::npos);
}

TEST_CASE("details: attributes by module.name, tensors by their full name, signatures by method") {
  const auto tensor = [](const char* name, std::vector<std::int64_t> shape) {
    TensorMetadata t;
    t.name = name;
    t.kind = "parameter";
    t.shape = std::move(shape);
    t.dtype = "torch.float32";
    t.device = "cpu";
    t.requires_grad = false;
    t.numel = 4;
    t.nbytes = 16;
    t.storage_crc32 = "00000000";
    return t;
  };
  const auto model = [&](Json root_attributes, std::vector<TensorMetadata> lin_tensors,
                         std::string returns) {
    ModelDetails details{64,
                         0,
                         std::vector<MethodSignature>{{"forward", {}, std::move(returns), {}, {}}},
                         std::nullopt,
                         std::nullopt,
                         std::nullopt,
                         std::nullopt,
                         std::nullopt,
                         {}};
    return ModelMetadata(
        "pkg.Net", 8, 8,
        {M("<root>", "pkg.Net", 0, 0, 0, true,
           ModuleDetails{std::vector<TensorMetadata>{}, std::move(root_attributes)}),
         M("lin", "pkg.Lin", 8, 8, 0, true,
           ModuleDetails{std::move(lin_tensors), Json::object({{"in_features", 2}})})},
        std::move(details));
  };
  const ModelMetadata a = model(Json::object({{"width", 2}, {"name", "a"}}),
                                {tensor("weight", {2, 2}), tensor("bias", {2})}, "Tensor");
  const ModelMetadata b = model(Json::object({{"width", 3}, {"depth", 1}}),
                                {tensor("weight", {4, 1})}, "Tuple[Tensor, Tensor]");
  const RecordDiff diff = diff_records(record_set(a, "a"), record_set(b, "b"), DiffGate());
  CHECK(
      lines(diff.changes) ==
      std::vector<std::string>{
          R"(changed attribute "<root>.width" null 2 3)",
          R"(removed attribute "<root>.name" null "a" null)",
          R"(added attribute "<root>.depth" null null 1)",
          R"(changed tensor "lin.weight" "shape" [2, 2] [4, 1])",
          R"(removed tensor "lin.bias" null {"module_path": "lin", "name": "bias", "kind": "parameter", "shape": [2], "dtype": "torch.float32", "device": "cpu", "requires_grad": false, "numel": 4, "nbytes": 16, "storage_crc32": "00000000"} null)",
          R"(changed signature "forward" "returns" "Tensor" "Tuple[Tensor, Tensor]")"});
  CHECK(diff.compared ==
        std::vector<std::string>{"model", "modules", "attributes", "tensors", "signatures"});
  // details one side lacks are not compared
  const RecordDiff plain =
      diff_records(record_set(a, "a"), record_set(old_model(), "m"), DiffGate());
  CHECK(plain.compared == std::vector<std::string>{"model", "modules"});
  CHECK_THROWS_WITH_AS(
      diff_records(record_set(a, "a"), record_set(b, "b"), ignoring({"storage_crc3"})),
      "--ignore storage_crc3: no compared record has this field; the closest: "
      "storage_crc32",
      UsageError);
  CHECK(diff_records(record_set(a, "a"), record_set(b, "b"),
                     ignoring({"attributes", "shape", "returns"}))
            .changes.size() == 1);  // the removed tensor
}

TEST_CASE("exact integers: differences across signs and past 64 bits, in decimal") {
  const auto of = [](const Json& j) { return *ExactInteger::of(j); };
  CHECK((of(Json(5)) - of(Json(-7))).decimal() == "12");
  CHECK((of(Json(-5)) - of(Json(7))).decimal() == "-12");
  CHECK((of(Json(3)) - of(Json(3))).decimal() == "0");
  CHECK((of(Json(std::numeric_limits<std::int64_t>::min())) - of(Json(1))).decimal() ==
        "-9223372036854775809");
  const Json big = big_integer_json("1000000000000000000000000000000");
  CHECK((of(big) - of(Json(1))).decimal() == "999999999999999999999999999999");
  CHECK(of(big).times(999999999999999999ull).decimal() ==
        "999999999999999999000000000000000000000000000000");
  CHECK(ExactInteger::compare_magnitudes(of(Json(-9)), of(Json(8))) == 1);
  CHECK_FALSE(ExactInteger::of(Json(1.5)));
  CHECK_FALSE(ExactInteger::of(Json("12")));
}

TEST_CASE("markdown code spans hold any text whole in a table cell") {
  CHECK(markdown_code("a|b") == "`a\\|b`");
  CHECK(markdown_code("x`y``z") == "```x`y``z```");
  CHECK(markdown_code("`edge") == "`` `edge ``");
  CHECK(markdown_code("a\\b\nc\td\x01") == "`a\\\\b\\nc\\td\\u0001`");
  // nothing that could end a line stays: CR, DEL, C1 (NEL), the line and paragraph separators;
  // a byte that is not UTF-8 as the records write it; other text as it is
  CHECK(markdown_code("r\rdel\x7f") == "`r\\rdel\\u007f`");
  CHECK(markdown_code("nel\xC2\x85 ls\xE2\x80\xA8 ps\xE2\x80\xA9") ==
        "`nel\\u0085 ls\\u2028 ps\\u2029`");
  CHECK(markdown_code("bad\xFF\xC3") == "`bad\\udcff\\udcc3`");
  CHECK(markdown_code("caf\xC3\xA9 \xE6\xA8\xA1") == "`caf\xC3\xA9 \xE6\xA8\xA1`");
  // a value's JSON keeps its escapes, which are the same: a newline `\n`, a backslash `\\`
  CHECK(markdown_json_code(R"("a\nb\\c|d\u001b")") == R"(`"a\nb\\c\|d\u001b"`)");
  CHECK(markdown_json_code(R"("\b\f")") == R"(`"\u0008\u000c"`)");
  CHECK(markdown_json_code("[\"x`\"]") == "``[\"x`\"]``");
  CHECK(markdown_json_code(dump_line(Json("line\nbreak\x7f"))) == R"(`"line\nbreak\u007f"`)");
}

namespace {

// N modules `blocks.I` as inspect-model's jsonl lines, in `order`, module `changed` with 11
// direct parameters, every line ending in `eol`.
std::string module_lines(const std::vector<int>& order, int changed = -1,
                         const std::string& eol = "\n") {
  std::string out = "{\"record\": \"ModelMetadata\", \"model_type\": \"big.Net\", "
                    "\"total_parameters\": 10, \"trainable_parameters\": 10}" + eol;
  for (const int i : order)
    out += "{\"record\": \"ModuleMetadata\", \"path\": \"blocks." + std::to_string(i) +
           "\", \"module_type\": \"torch.nn.modules.linear.Linear\", \"direct_parameters\": " +
           (i == changed ? "11" : "10") +
           ", \"trainable_parameters\": 10, \"direct_buffers\": 0, \"training\": false}" + eol;
  return out;
}

RecordSet read_text(const std::string& text) {
  const std::string path = temp_file(text);
  RecordSet set = read_record_file(path);
  std::remove(path.c_str());
  return set;
}

std::vector<int> upto(int n) {
  std::vector<int> out;
  for (int i = 0; i < n; ++i) out.push_back(i);
  return out;
}

}  // namespace

TEST_CASE("records match by key whatever their order: in order, shifted, shuffled, reversed") {
  const RecordSet old_set = read_text(module_lines(upto(2000)));
  // one module removed near the front, one added at the end: the rest found where expected
  std::vector<int> shifted = upto(2000);
  shifted.erase(shifted.begin() + 3);
  shifted.push_back(5000);
  const auto diff = diff_records(old_set, read_text(module_lines(shifted, 1500)), DiffGate());
  CHECK(lines(diff.changes) ==
        std::vector<std::string>{
            R"(removed module "blocks.3" null {"path": "blocks.3", "module_type": "torch.nn.modules.linear.Linear", "direct_parameters": 10, "trainable_parameters": 10, "direct_buffers": 0, "training": false} null)",
            "changed module \"blocks.1500\" \"direct_parameters\" 10 11",
            R"(added module "blocks.5000" null null {"path": "blocks.5000", "module_type": "torch.nn.modules.linear.Linear", "direct_parameters": 10, "trainable_parameters": 10, "direct_buffers": 0, "training": false})"});
  // the same modules in any order: nothing changed
  const std::vector<int> all = upto(2000);
  const std::vector<int> reversed(all.rbegin(), all.rend());
  std::vector<int> shuffled = upto(2000);
  for (std::size_t i = 0; i < shuffled.size(); ++i)
    std::swap(shuffled[i], shuffled[(i * 7919) % shuffled.size()]);
  for (const auto& order : {reversed, shuffled}) {
    CHECK(diff_records(old_set, read_text(module_lines(order)), DiffGate()).changes.empty());
    CHECK(lines(diff_records(read_text(module_lines(order, 42)), old_set, DiffGate()).changes) ==
          std::vector<std::string>{"changed module \"blocks.42\" \"direct_parameters\" 11 10"});
  }
}

TEST_CASE("a key is its value, however it is written: escapes, non-ASCII, numbers") {
  // the same path written plainly, with escapes, and as UTF-8 bytes
  const auto model = [](const std::string& path, const std::string& type) {
    return "{\"record\": \"ModelMetadata\", \"model_type\": \"m\", \"total_parameters\": 0, "
           "\"trainable_parameters\": 0}\n{\"record\": \"ModuleMetadata\", \"path\": " + path +
           ", \"module_type\": " + type + ", \"direct_parameters\": 0, \"trainable_parameters\": "
           "0, \"direct_buffers\": 0, \"training\": true}\n";
  };
  const RecordSet plain = read_text(model("\"caf\\u00e9.x\"", "\"T\""));
  const RecordSet escaped = read_text(model("\"caf\\u00E9\\u002ex\"", "\"\\u0054\""));
  const RecordSet utf8 = read_text(model("\"caf\xc3\xa9.x\"", "\"T\""));
  CHECK(diff_records(plain, escaped, DiffGate()).changes.empty());
  CHECK(diff_records(utf8, escaped, DiffGate()).changes.empty());
  // a value written another way is the same value (1.0 and 1 are not: same_json)
  const RecordSet other = read_text(model("\"caf\\u00e9.x\"", "\"U\""));
  CHECK(lines(diff_records(plain, other, DiffGate()).changes) ==
        std::vector<std::string>{"changed module \"caf\\u00e9.x\" \"module_type\" \"T\" \"U\""});
}

TEST_CASE("a record file is read in pieces: long lines, CRLF, no last newline, blank lines") {
  const RecordSet plain = read_text(module_lines(upto(3)));
  // Windows line ends, blank lines between, the last line without its newline
  std::string crlf = module_lines(upto(3), -1, "\r\n\r\n  \t\n");
  CHECK(diff_records(plain, read_text(crlf.substr(0, crlf.size() - 7)), DiffGate()).changes.empty());
  // a line of 9 MB (past the 4 MiB a piece holds) among short ones, read whole
  const std::string type(9 << 20, 'T');
  std::string text = module_lines(upto(3));
  const std::size_t at = text.find("torch.nn.modules.linear.Linear", text.find("blocks.1"));
  text.replace(at, 30, type);
  const auto diff = diff_records(plain, read_text(text), DiffGate());
  REQUIRE(diff.changes.size() == 1);
  CHECK(diff.changes[0].new_value == Json(type));
  // a change on the last line of a file without a final newline
  std::string last = module_lines(upto(3), 2);
  last.pop_back();
  CHECK(lines(diff_records(plain, read_text(last), DiffGate()).changes) ==
        std::vector<std::string>{"changed module \"blocks.2\" \"direct_parameters\" 10 11"});
}

TEST_CASE("values shared with the record before stay each record's own") {
  // every module the same type but one; the one in the middle differs, and so do its neighbours'
  // numbers: a text kept once for many records is still compared record by record
  std::string text = module_lines(upto(5));
  const std::size_t at = text.find("torch.nn.modules.linear.Linear", text.find("blocks.2"));
  text.replace(at, 30, "torch.nn.Identity");
  const RecordSet set = read_text(text);
  REQUIRE(set.items.size() == 5);
  CHECK(set.items.to_json(1)["module_type"] == "torch.nn.modules.linear.Linear");
  CHECK(set.items.to_json(2)["module_type"] == "torch.nn.Identity");
  CHECK(set.items.to_json(3)["module_type"] == "torch.nn.modules.linear.Linear");
  CHECK(lines(diff_records(read_text(module_lines(upto(5))), set, DiffGate()).changes) ==
        std::vector<std::string>{
            "changed module \"blocks.2\" \"module_type\" \"torch.nn.modules.linear.Linear\" "
            "\"torch.nn.Identity\""});
  // a repeated key in a line: the last value in the first place, as a parsed object
  const RecordSet twice = read_text(
      "{\"record\": \"ModelMetadata\", \"model_type\": \"m\", \"total_parameters\": 0, "
      "\"trainable_parameters\": 0}\n{\"record\": \"ModuleMetadata\", \"path\": \"a\", "
      "\"direct_parameters\": 1, \"module_type\": \"T\", \"trainable_parameters\": 0, "
      "\"direct_buffers\": 0, \"training\": true, \"direct_parameters\": 2}\n");
  CHECK(dump_line(twice.items.to_json(0)) ==
        R"({"path": "a", "direct_parameters": 2, "module_type": "T", "trainable_parameters": 0, "direct_buffers": 0, "training": true})");
}
