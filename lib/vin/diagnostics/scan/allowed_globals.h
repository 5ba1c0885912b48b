// Which globals a pickle may import and still load as data (contract 14.3): exactly what torch's
// weights_only unpickler allows by default (its table copied here with the torch it came from),
// `--allow` names added as torch.serialization.add_safe_globals would, and the names no --allow
// may add. A deny-list only labels findings `dangerous`; the verdict is the allow-list's.
#pragma once

#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace vin::diagnostics {

/// The torch whose torch._weights_only_unpickler._get_allowed_globals() the default list is.
inline constexpr const char* kAllowListTorchVersion = "2.14.1";

/// `module`.`name` as Python 3's unpickler imports the global a pickle names (GLOBAL's two lines,
/// STACK_GLOBAL's two strings): Python 2's names renamed as _compat_pickle says
/// (`__builtin__.set` is `builtins.set`, `copy_reg._reconstructor` `copyreg._reconstructor`).
std::string imported_global(std::string_view module, std::string_view name);

/// torch's default list with the names --allow added.
class AllowList {
 public:
  /// torch's default list alone.
  AllowList() = default;
  /// Adds `name` (`module.qualname`, as add_safe_globals keys it). Throws UsageError for a name
  /// in the modules os, posix, nt, sys, subprocess (any name under them) or builtins.eval, exec,
  /// compile, getattr, __import__ (and their Python 2 spellings), or one that is not dotted.
  void allow(const std::string& name);
  /// Whether `global` (imported_global's spelling) is allowed.
  bool allows(std::string_view global) const;
  /// The same list that also allows the names LibTorch's own unpickler resolves in a
  /// TorchScript archive (`__torch__.*` classes compiled from its code/, `torch.jit._pickle.*`,
  /// PyTorch 1.0-1.2's `__main__.TensorID`, `IntList`, `LiteralTensor`):
  /// no Python is imported for them; what runs is the archive's TorchScript.
  AllowList with_torchscript_names() const;
  /// The names --allow added, sorted.
  const std::set<std::string, std::less<>>& added() const { return added_; }

 private:
  std::set<std::string, std::less<>> added_;
  bool torchscript_ = false;
};

/// Whether torch.load(weights_only=True) refuses `global` before its list: a module torch blocks
/// outright (os, posix, nt, sys).
bool blocked_by_torch(std::string_view global);

/// Whether `global` is on the deny-list of known code execution (picklescan's and torch's
/// modules and names: os, subprocess, builtins.eval, runpy, socket, ...): the label
/// `dangerous` of a finding.
bool dangerous_global(std::string_view global);

/// Whether calling `global` unpickles its bytes argument (pickle.loads, torch.load,
/// torch.storage._load_from_bytes, ...): the scan then walks that argument as a pickle too.
bool unpickling_global(std::string_view global);

/// torch's default list, sorted (for tests and messages).
std::vector<std::string> default_allowed_globals();

}  // namespace vin::diagnostics
