#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "vin/diagnostics/records/error.h"
#include "vin/diagnostics/text/module_selection.h"

using namespace vin::diagnostics;

namespace {

struct Case {
  const char* pattern;
  std::vector<std::string> matches;
};

const std::vector<std::string> kPaths = {"<root>",       "layer3",  "layer3.0", "layer3.0.conv1",
                                         "layer3.1.bn2", "layer30", "fc",       "a[b]",
                                         "x.y"};

// what Python's fnmatch.fnmatchcase answers for each pattern over kPaths
const Case kCases[] = {
    {"layer3.*", {"layer3.0", "layer3.0.conv1", "layer3.1.bn2"}},
    {"layer3*", {"layer3", "layer3.0", "layer3.0.conv1", "layer3.1.bn2", "layer30"}},
    {"*",
     {"<root>", "layer3", "layer3.0", "layer3.0.conv1", "layer3.1.bn2", "layer30", "fc", "a[b]",
      "x.y"}},
    {"?c", {"fc"}},
    {"layer3.[01].*", {"layer3.0.conv1", "layer3.1.bn2"}},
    {"layer3.[!0].*", {"layer3.1.bn2"}},
    {"*.bn?", {"layer3.1.bn2"}},
    {"a[b]", {}},
    {"a[[]b]", {"a[b]"}},
    {"<root>", {"<root>"}},
    {"layer[2-3]", {"layer3"}},
    {"*conv*", {"layer3.0.conv1"}},
    {"[", {}},
    {"fc*fc", {}},
    {"**",
     {"<root>", "layer3", "layer3.0", "layer3.0.conv1", "layer3.1.bn2", "layer30", "fc", "a[b]",
      "x.y"}},
    {"x?y", {"x.y"}},
};

}  // namespace

TEST_CASE("wildcard_match agrees with Python's fnmatch.fnmatchcase") {
  for (const Case& c : kCases) {
    CAPTURE(c.pattern);
    std::vector<std::string> got;
    for (const auto& path : kPaths)
      if (wildcard_match(c.pattern, path)) got.push_back(path);
    CHECK(got == c.matches);
  }
  // many stars against a long path stay quick (one backtrack point)
  CHECK_FALSE(wildcard_match(std::string(50, '*') + "x", std::string(5000, 'a')));
}

TEST_CASE("select_module_paths: exact paths and patterns, in registration order") {
  CHECK(select_module_paths({"fc", "layer3.*"}, kPaths) ==
        std::vector<std::string>{"layer3.0", "layer3.0.conv1", "layer3.1.bn2", "fc"});
  CHECK(select_module_paths({"<root>", "<root>"}, kPaths) == std::vector<std::string>{"<root>"});
  CHECK_THROWS_WITH_AS(
      select_module_paths({"layer4.*"}, kPaths),
      "--module 'layer4.*': no module path matches it; closest registered paths: 'layer3' "
      "'layer3.0' 'layer30'",
      UsageError);
  CHECK_THROWS_AS(select_module_paths({"layer9"}, kPaths), UsageError);
  // nothing like a typo of it: the nearest paths all the same (contract 7.4), and where the rest
  // are
  CHECK_THROWS_WITH_AS(select_module_paths({"nosuchthing"}, kPaths),
                       "--module 'nosuchthing': unknown module path; closest registered paths: "
                       "'<root>' 'fc' 'layer3'; run inspect-model to list them all",
                       UsageError);
}
