// torch.utils._pytree's TreeSpec as torch.export writes it (treespec_dumps: `[1, {"type": ...,
// "context": ..., "children_spec": [...]}]`), read to flatten forward's arguments into the
// program's inputs and to give its outputs their structure back: tuples, lists, dicts (their
// keys in the context), namedtuples and torch.return_types as tuples, None, leaves.
#pragma once

#include <ATen/core/ivalue.h>

#include <string>
#include <vector>

namespace vin::diagnostics::export_run {

struct TreeSpec {
  enum class Kind { leaf, tuple, list, dict, none };
  Kind kind = Kind::leaf;
  std::vector<c10::IValue> keys;  ///< a dict's, in order (strings or ints)
  std::vector<TreeSpec> children;

  /// How many leaves it holds.
  std::size_t leaves() const;
};

/// The spec `text` (treespec_dumps' JSON). Throws Error naming `where` for one it cannot read
/// (a custom node type: its name).
TreeSpec read_tree_spec(const std::string& text, const std::string& where);

/// `value` flattened by `spec` into `out` (leaves in the spec's order). Throws Error naming
/// `where` where the value's structure is not the spec's (a missing key, another length).
void flatten(const c10::IValue& value, const TreeSpec& spec, std::vector<c10::IValue>& out,
             const std::string& where);

/// The value `spec` describes, its leaves taken from `leaves` from `next` on.
c10::IValue unflatten(const TreeSpec& spec, const std::vector<c10::IValue>& leaves,
                      std::size_t& next);

}  // namespace vin::diagnostics::export_run
