#include <doctest/doctest.h>

#include <limits>

#include "vin/diagnostics/tables/command_tables.h"
#include "vin/diagnostics/tables/text_table.h"

using namespace vin::diagnostics;

TEST_CASE("thousands separators") {
  CHECK(with_thousands_separators(0) == "0");
  CHECK(with_thousands_separators(999) == "999");
  CHECK(with_thousands_separators(1000) == "1,000");
  CHECK(with_thousands_separators(11689512) == "11,689,512");
  CHECK(with_thousands_separators(-1234) == "-1,234");
  CHECK(with_thousands_separators(std::numeric_limits<std::int64_t>::max()) ==
        "9,223,372,036,854,775,807");
  CHECK(with_thousands_separators(std::numeric_limits<std::int64_t>::min()) ==
        "-9,223,372,036,854,775,808");
}

TEST_CASE("text table aligns columns and strips trailing blanks") {
  TextTable t;
  t.add_column("Name", TextTable::Align::left);
  t.add_column("Count", TextTable::Align::right);
  t.add_row({"a", "1"});
  t.add_row({"longer", "1,000"});
  t.add_row({"μ", ""});  // UTF-8 counts as one column
  CHECK(t.width() == 13);
  CHECK(t.render() ==
        "Name    Count\n"
        "-------------\n"
        "a           1\n"
        "longer  1,000\n"
        "μ");
}

TEST_CASE("model table: tree by depth, totals underneath") {
  const ModelMetadata model(
      "pkg.Net", 1234567, 1000000,
      {ModuleMetadata("<root>", "pkg.Net", 0, 0, 0, true),
       ModuleMetadata("enc", "pkg.Enc", 1234000, 1000000, 3, true),
       ModuleMetadata("enc.lin", "torch.nn.modules.linear.Linear", 567, 0, 0, false)});
  const std::string table = format_model_table(model);
  CHECK(table ==
        "Model: pkg.Net\n"
        "==============================================================================\n"
        "Module   Type                            Parameters  Trainable  Buffers  Mode\n"
        "------------------------------------------------------------------------------\n"
        "<root>   pkg.Net                                  0          0        0  train\n"
        "  enc    pkg.Enc                          1,234,000  1,000,000        3  train\n"
        "    lin  torch.nn.modules.linear.Linear         567          0        0  eval\n"
        "==============================================================================\n"
        "Modules:                          3\n"
        "Total parameters:         1,234,567\n"
        "Trainable parameters:     1,000,000\n"
        "Non-trainable parameters:   234,567\n");
}

TEST_CASE("model table: very deep modules stop indenting and show their depth") {
  std::vector<ModuleMetadata> modules{ModuleMetadata("<root>", "D", 0, 0, 0, true)};
  std::string path;
  for (int depth = 1; depth <= 14; ++depth) {
    path += (path.empty() ? "" : ".") + std::string("inner");
    modules.emplace_back(path, "D", 0, 0, 0, true);
  }
  const std::string table = format_model_table(ModelMetadata("D", 0, 0, modules));
  CHECK(table.find("\n" + std::string(24, ' ') + "inner ") != std::string::npos);  // depth 12
  CHECK(table.find("\n" + std::string(24, ' ') + "[13] inner ") != std::string::npos);
  CHECK(table.find("\n" + std::string(24, ' ') + "[14] inner ") != std::string::npos);
}

TEST_CASE("profile table: a module hangs under its nearest ancestor that has a row") {
  // profile's rows are the modules called, in call order: the ModuleList `stages` is never
  // called, and `a` (called by the root outside `b`) has no row before `a.sub`
  ProfileRecords profile;
  for (const char* path : {"<root>", "stem", "stem.0", "stages.0", "stages.0.conv", "a.sub", "a"}) {
    ModuleProfile m;
    m.module_path = path;
    m.module_type = "T";
    profile.modules.push_back(m);
  }
  const std::string table = format_profile_table(profile);
  std::vector<std::string> labels;
  std::size_t at = 0;
  for (int line = 0; line < 3; ++line) at = table.find('\n', at) + 1;  // rule, header, rule
  for (std::size_t i = 0; i < profile.modules.size(); ++i) {
    const std::size_t end = table.find('\n', at);
    const std::string row = table.substr(at, end - at);
    labels.push_back(row.substr(0, row.find(" (T)")));
    at = end + 1;
  }
  CHECK(labels == std::vector<std::string>{"<root>", "  stem", "    0", "  stages.0", "    conv",
                                           "  a.sub", "  a"});
}

namespace {

ModuleProfile profiled(const std::string& path, double time_ms, double self_ms) {
  ModuleProfile m;
  m.module_path = path;
  m.module_type = "torchvision.ops.misc.Conv2dNormActivation";
  m.output_shapes = {{1, 16, 112, 112}, {1, 16, 112, 112}};
  m.parameters = 1234567;
  m.time_ms = time_ms;
  m.self_time_ms = self_ms;
  m.calls = 1;
  return m;
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

}  // namespace

TEST_CASE("profile table: within its width, short types, self time; --depth folds") {
  ProfileRecords profile;
  profile.summary.instrumented_ms = 10;
  profile.modules = {profiled("<root>", 10, 1),
                     profiled("features", 9, 2),
                     profiled("features.0", 4, 1),
                     profiled("features.0.block_with_a_rather_long_name.0", 3, 3),
                     profiled("features.1", 3, 3)};
  const std::string table = format_profile_table(profile);
  for (const std::string& line : lines_of(table)) CHECK(line.size() <= kProfileTableWidth);
  CHECK(table.find("<root> (Conv2dNormAct...") != std::string::npos);  // cut, and short
  CHECK(table.find("torchvision.ops") == std::string::npos);
  CHECK(table.find("Self ms") != std::string::npos);
  CHECK(table.find("cells cut to fit 100 columns") != std::string::npos);
  // a wide terminal: nothing cut
  const std::string wide = format_profile_table(profile, {std::nullopt, 200});
  CHECK(wide.find("cut to fit") == std::string::npos);
  CHECK(wide.find("\n      block_with_a_rather_long_name.0 (Conv2dNormActivation)  ") !=
        std::string::npos);
  // --depth 1: features.0 and below fold into features, whose self time takes their 4 ms + 3 ms
  const std::string folded = format_profile_table(profile, {1, 200});
  CHECK(folded.find("    0 (") == std::string::npos);
  CHECK(folded.find("3 modules deeper than --depth 1 folded") != std::string::npos);
  bool features_row = false;
  for (const std::string& line : lines_of(folded))
    if (line.rfind("  features (", 0) == 0) {
      features_row = true;
      CHECK(line.find("  9.000  ") != std::string::npos);  // self 2 + 4 + 3
    }
  CHECK(features_row);
}

TEST_CASE("profile table: why a module has no rows under it; MACs and self time of operators") {
  ProfileRecords profile;
  ModuleProfile layer = profiled("layers.0", 2, 2);
  layer.uncalled_children = {"self_attn", "linear1"};
  layer.work_operators = {"aten::_transformer_encoder_layer_fwd"};
  profile.modules = {layer};
  OperatorProfile op{"aten::_transformer_encoder_layer_fwd", 2, 400, 1.5, 0.5};
  profile.operators = {op};
  const std::string table = format_profile_table(profile, {std::nullopt, 200});
  CHECK(table.find("No rows under layers.0: its forward did not call self_attn, linear1 (it "
                   "called aten::_transformer_encoder_layer_fwd itself)") != std::string::npos);
  // in 100 columns the sentence is broken at a space, its second line indented
  const std::string narrow = format_profile_table(profile);
  CHECK(narrow.find("self_attn, linear1 (it called\n  aten::_transformer_encoder_layer_fwd "
                    "itself)") != std::string::npos);
  for (const std::string& line : lines_of(narrow)) CHECK(line.size() <= kProfileTableWidth);
  CHECK(table.find("MACs") != std::string::npos);
  CHECK(table.find("  200  ") != std::string::npos);  // its MACs
  CHECK(table.find("0.500") != std::string::npos);    // its self time
}

TEST_CASE("profile table: the latency line counts its runs in words that agree") {
  ProfileRecords profile;
  profile.summary.device = "cpu";
  profile.summary.warmup = 0;
  profile.summary.runs = 1;
  CHECK(format_profile_table(profile).find(")\n  over 1 run after 0 warm-up; ") != std::string::npos);
  profile.summary.runs = 10;
  profile.summary.warmup = 3;
  CHECK(format_profile_table(profile).find(")\n  over 10 runs after 3 warm-up; ") !=
        std::string::npos);
}
