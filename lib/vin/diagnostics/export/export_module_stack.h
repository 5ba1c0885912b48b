// A torch.export node's `nn_module_stack` (contract 10.3) as the modules it names: the entries
// split as every torch 2.1-2.14 wrote them, and each entry's path as a dotted module path. The
// path is the dotted registration path from torch 2.2 on for most models, but dynamo's source
// expressions survive where torch's own normalisation gives up (a Sequential root under 2.6:
// `getattr(L['fn'], '0')`), and 2.1 wrote them unnormalised; they are read here, never run.
#pragma once

#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace vin::diagnostics {

/// The key (and path and type) torch's export gives a node that had no nn_module_stack of its
/// own (torch/export/_unlift.py, unflatten's empty-stack marker): it names no module.
inline constexpr const char* kEmptyModuleStackMarker = "_empty_nn_module_stack_from_metadata_hook";

/// One entry as torch wrote it: the stack's key (dynamo's module key, `L__self___fc`, with
/// `@N` for a later call), the module's path as written, its qualified type.
struct ModuleStackEntry {
  std::string key;
  std::string path;
  std::string type;
};

/// An nn_module_stack that is not what torch writes: `what` quotes the offending entry.
class MalformedModuleStack : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// The entries of `text`, outermost first: `key,path,type` joined by ';' (torch 2.2 on; the
/// path may hold commas, `getattr(L['fn'], '0')`, and semicolons inside a source expression's
/// brackets or strings, `L['self'].heads['a;b']`), or `key:(path,type)` (torch 2.1). Empty text
/// has none. Throws MalformedModuleStack for an entry that splits into no key, path and type
/// (an empty key or type included).
std::vector<ModuleStackEntry> split_module_stack(std::string_view text);

/// The program's other module paths (its call graph's, its tensors' names' prefixes) by the
/// name dynamo's module keys sanitise them to (every character not a letter or digit as '_':
/// `layers.0` is `layers_0`), made once for all the program's stacks.
class SanitisedModules {
 public:
  explicit SanitisedModules(const std::set<std::string>& paths);
  /// The one path sanitised to `name`; nothing for none, or for two (`a.b`, `a_b`).
  std::optional<std::string> path_of(const std::string& name) const;

 private:
  std::unordered_map<std::string, std::optional<std::string>> paths_;
};

/// Each entry's module as a dotted path ("" the root), or nothing where its path is not one
/// unambiguously (the empty-stack marker, a global, a slice of a Sequential, a negative index, a
/// sanitised name two modules could have): `layers.0` as written (after `self.` too); `L['self'].layers[0]`,
/// `self.layers[0]`, `getattr(L['self'].layers, '0')` and
/// `L['self']._modules['layers']._modules['0']` as `layers.0`; a bare local (`L['fn']`) right
/// after the root's entry and of the root's type is the root under another name (torch 2.6
/// exports a Sequential root so: the local of the frame dynamo traced), and paths through it are
/// the root's, any other local is not known; `L__self___layers_0` is the one module of `known`
/// sanitised so, else, with no '_' left to split, the root's child.
std::vector<std::optional<std::string>> module_stack_paths(
    const std::vector<ModuleStackEntry>& entries, const SanitisedModules& known);

}  // namespace vin::diagnostics
