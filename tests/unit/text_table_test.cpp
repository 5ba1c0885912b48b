#include <doctest/doctest.h>

#include <limits>

#include "vin/diagnostics/output/text_table.h"

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

TEST_CASE("profile table: the latency line counts its runs in words that agree") {
  ProfileRecords profile;
  profile.summary.device = "cpu";
  profile.summary.warmup = 0;
  profile.summary.runs = 1;
  CHECK(format_profile_table(profile).find(") over 1 run after 0 warm-up; ") != std::string::npos);
  profile.summary.runs = 10;
  profile.summary.warmup = 3;
  CHECK(format_profile_table(profile).find(") over 10 runs after 3 warm-up; ") !=
        std::string::npos);
}
