// The module tree a report draws (contract 13.2): every record's module path placed under its
// dotted prefixes, a prefix without a record of its own a container (a ModuleList's, or what a
// hostile dotted name makes; report_page sums its children's values). Paths are taken
// as the records give them, any bytes: the parent of `a.b` is `a`, of `a..b` the container
// `a.`, of a path without a dot the root.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "vin/diagnostics/records/model_metadata.h"  // kRootPath: the root's path

namespace vin::diagnostics {

/// The parent of `path`: what comes before its last dot, or the root's path for a path without
/// one (and for the root itself).
std::string parent_path(std::string_view path);

class ModuleTree {
 public:
  static constexpr std::size_t kNone = static_cast<std::size_t>(-1);

  struct Node {
    std::string path;                   ///< the record's module_path; kRootPath for the root
    std::string name;                   ///< after the parent's path and its dot (the root: "")
    std::size_t parent = kNone;         ///< the root's is kNone
    std::vector<std::size_t> children;  ///< in the order their records came
    std::size_t record = kNone;         ///< the record it was made from; kNone: a container
    std::size_t depth = 0;              ///< the root's is 0
    bool container() const { return record == kNone; }
  };

  /// The tree of `paths` (record i's module path is paths[i]; kRootPath the root, which is made a
  /// container when no record names it). A path given twice keeps its first record.
  explicit ModuleTree(const std::vector<std::string>& paths);

  const Node& node(std::size_t index) const { return nodes_.at(index); }
  std::size_t size() const { return nodes_.size(); }
  static constexpr std::size_t root() { return 0; }
  /// The node of `path`, or nothing.
  std::optional<std::size_t> find(std::string_view path) const;

 private:
  std::size_t add(const std::string& path, std::size_t record);
  std::vector<Node> nodes_;
  std::unordered_map<std::string, std::size_t> index_;  // path -> node
};

}  // namespace vin::diagnostics
