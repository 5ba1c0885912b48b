// What a TorchScript archive runs when LibTorch loads it (contract 14.3): the `__setstate__`
// method of each class in its code/, and every method and function that method reaches, read
// as text (class_source) and never compiled or run. Copying state is what such code is for:
// assignments, torch's own operators (aten, prim, quantized: the prepacking of quantized modules
// included), methods of the module. Anything else is a finding: a file operation (torch.save,
// torch.from_file), an operator or class of a namespace outside torch's own (a custom operator
// library's code), code the archive calls but does not hold.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace vin::diagnostics {

/// One thing load-time code does beyond copying state.
struct LoadTimeFinding {
  std::string record;    ///< the code/ member whose class defines the __setstate__
  std::string name;      ///< the call (`torch.save`, `ops.myext.run`), or what went wrong
  std::string severity;  ///< `dangerous` (file access), `not-allowed`, `malformed`
  bool runs_code = false;  ///< false: the code cannot be judged (not read, or not there)
  std::string reason;      ///< one sentence
};

/// The archive's code/ members as (member name, its text); a member name holds `code/`
/// (`archive/code/__torch__/m.py`).
using CodeMembers = std::vector<std::pair<std::string, std::string>>;

/// What the load-time code of `code` does beyond copying state; empty where it copies state only
/// (or where no class defines `__setstate__`).
std::vector<LoadTimeFinding> judge_load_time_code(const CodeMembers& code);

/// Whether `ns` is an operator namespace of torch itself (`aten`, `prim`, `quantized`, ...),
/// whose operators copy and compute but reach no file, network or foreign library.
bool torch_operator_namespace(std::string_view ns);

/// Whether `ns` is a namespace of torch's own C++ classes (`torch.classes.quantized`, `rnn`,
/// `xnnpack`, ...), whose `__setstate__` is torch's own code.
bool torch_class_namespace(std::string_view ns);

}  // namespace vin::diagnostics
