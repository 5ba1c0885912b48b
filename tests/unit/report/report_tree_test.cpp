#include "vin/diagnostics/report/report_tree.h"

#include <doctest/doctest.h>

#include <string>
#include <vector>

using namespace vin::diagnostics;

namespace {

std::vector<std::string> children_paths(const ModuleTree& tree, std::size_t node) {
  std::vector<std::string> out;
  for (const std::size_t child : tree.node(node).children) out.push_back(tree.node(child).path);
  return out;
}

}  // namespace

TEST_CASE("parent_path: before the last dot, the root above a path without one") {
  CHECK(parent_path("layer1.0.conv1") == "layer1.0");
  CHECK(parent_path("fc") == "<root>");
  CHECK(parent_path("<root>") == "<root>");
  CHECK(parent_path("a..b") == "a.");
  CHECK(parent_path("a.") == "a");
  CHECK(parent_path(".x") == "");
  CHECK(parent_path("") == "<root>");
}

TEST_CASE("ModuleTree puts each record under its prefixes, containers where none has a record") {
  // a ModuleList (blocks) has no record of its own: a container summing its children
  const ModuleTree tree({"<root>", "blocks.0", "blocks.0.fc", "blocks.1", "head"});
  REQUIRE(tree.size() == 6);
  CHECK(children_paths(tree, ModuleTree::root()) == std::vector<std::string>{"blocks", "head"});
  const std::size_t blocks = *tree.find("blocks");
  CHECK(tree.node(blocks).container());
  CHECK(tree.node(blocks).depth == 1);
  CHECK(children_paths(tree, blocks) == std::vector<std::string>{"blocks.0", "blocks.1"});
  const auto& fc = tree.node(*tree.find("blocks.0.fc"));
  CHECK(fc.name == "fc");
  CHECK(fc.record == 2);
  CHECK(fc.depth == 3);
  CHECK_FALSE(tree.node(ModuleTree::root()).container());

}

TEST_CASE("ModuleTree takes any dotted name: hostile ones make containers, nothing is lost") {
  const ModuleTree tree({"a..b", ".x", "", "<root>.y", "b", "a.", "b"});
  // a..b under the container a. (whose record comes later) under the container a
  const auto& ab = tree.node(*tree.find("a..b"));
  CHECK(ab.name == "b");
  CHECK(tree.node(ab.parent).path == "a.");
  CHECK(tree.node(ab.parent).record == 5);  // its record, found after its child's
  CHECK(tree.node(tree.node(ab.parent).parent).path == "a");
  CHECK(tree.node(tree.node(ab.parent).parent).container());
  // .x under the module "" (a record of its own) under the root
  const auto& x = tree.node(*tree.find(".x"));
  CHECK(tree.node(x.parent).path == "");
  CHECK(tree.node(x.parent).record == 2);
  CHECK(tree.node(tree.node(x.parent).parent).path == "<root>");
  // the root has no record: a container; a path given twice keeps its first record
  CHECK(tree.node(ModuleTree::root()).container());
  CHECK(tree.node(*tree.find("b")).record == 4);
  CHECK(tree.node(*tree.find("<root>.y")).parent == ModuleTree::root());
}

TEST_CASE("ModuleTree of a deep chain and of many siblings") {
  std::vector<std::string> paths;
  std::string path = "m";
  for (int i = 0; i < 2000; ++i) {
    paths.push_back(path);
    path += ".m";
  }
  for (int i = 0; i < 10000; ++i) paths.push_back("wide." + std::to_string(i));
  const ModuleTree tree(paths);
  CHECK(tree.size() == 1 + 2000 + 1 + 10000);
  CHECK(tree.node(*tree.find(paths[1999])).depth == 2000);
  CHECK(tree.node(*tree.find("wide")).children.size() == 10000);
}
