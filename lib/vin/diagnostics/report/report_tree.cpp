#include "vin/diagnostics/report/report_tree.h"

#include <iterator>

namespace vin::diagnostics {

std::string parent_path(std::string_view path) {
  const std::size_t dot = path.rfind('.');
  if (path == std::string_view(kRootPath) || dot == std::string_view::npos) return std::string(kRootPath);
  return std::string(path.substr(0, dot));
}

ModuleTree::ModuleTree(const std::vector<std::string>& paths) {
  nodes_.push_back({std::string(kRootPath), "", kNone, {}, kNone, 0});
  index_.emplace(std::string(kRootPath), 0);
  for (std::size_t i = 0; i < paths.size(); ++i) {
    const auto found = index_.find(paths[i]);
    if (found == index_.end()) {
      add(paths[i], i);
    } else if (nodes_[found->second].container()) {  // a container first, its record later
      nodes_[found->second].record = i;
    }
  }
}

// The node of `path`, made with its missing ancestors (containers) where it has none yet
std::size_t ModuleTree::add(const std::string& path, std::size_t record) {
  // the ancestors missing, nearest first; then each made under the one above it
  std::vector<std::string> missing{path};
  std::string parent = parent_path(path);
  while (index_.find(parent) == index_.end()) {
    missing.push_back(parent);
    parent = parent_path(parent);
  }
  std::size_t above = index_.at(parent);
  for (auto it = missing.rbegin(); it != missing.rend(); ++it) {
    Node node;
    node.path = *it;
    const std::string& above_path = nodes_[above].path;
    node.name = above == root() ? *it : it->substr(above_path.size() + 1);
    node.parent = above;
    node.depth = nodes_[above].depth + 1;
    node.record = std::next(it) == missing.rend() ? record : kNone;  // the path itself: last
    const std::size_t index = nodes_.size();
    nodes_.push_back(std::move(node));
    nodes_[above].children.push_back(index);
    index_.emplace(*it, index);
    above = index;
  }
  return above;
}

std::optional<std::size_t> ModuleTree::find(std::string_view path) const {
  const auto it = index_.find(std::string(path));
  if (it == index_.end()) return std::nullopt;
  return it->second;
}

}  // namespace vin::diagnostics
