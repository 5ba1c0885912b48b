#include <doctest/doctest.h>

#include "vin/diagnostics/text/suggest.h"

using namespace vin::diagnostics;

TEST_CASE("edit distance") {
  CHECK(edit_distance("", "") == 0);
  CHECK(edit_distance("model", "model") == 0);
  CHECK(edit_distance("modle", "model") == 2);
  CHECK(edit_distance("kitten", "sitting") == 3);
  CHECK(edit_distance("", "abc") == 3);
  CHECK(edit_distance("abc", "") == 3);
}

TEST_CASE("closest matches keep only plausible typos, nearest first") {
  const std::vector<std::string> names{"inspect-model", "model", "inspect-config", "config",
                                       "capture"};
  CHECK(closest_matches("modle", names) == std::vector<std::string>{"model"});
  CHECK(closest_matches("inspect-modle", names, 1) == std::vector<std::string>{"inspect-model"});
  CHECK(closest_matches("captur", names) == std::vector<std::string>{"capture"});
  CHECK(closest_matches("zzzzzzzz", names).empty());
  // without the typo bound: the nearest all the same, ties in candidate order
  CHECK(closest_matches("zzzzzzzz", names, 2, false) ==
        std::vector<std::string>{"model", "config"});
  const std::vector<std::string> paths{"blocks.0.lin", "blocks.1.lin", "blocks.0.act", "head"};
  const auto near = closest_matches("blocks.0.lni", paths);
  REQUIRE(!near.empty());
  CHECK(near.front() == "blocks.0.lin");
  CHECK(closest_matches("blocks.0.lin", paths, 0).empty());
}
