// TorchScript qualified names to the Python-qualified names the records report (docs/records.md).
#pragma once

#include <string>
#include <string_view>

namespace vin::diagnostics {

/// `__torch__.torch.nn.modules.linear.___torch_mangle_3.Linear` ->
/// `torch.nn.modules.linear.Linear`: drops a leading `__torch__.` and every `___torch_mangle_N.`
/// segment. Other names pass unchanged.
std::string python_type_name(std::string_view torchscript_name);

}  // namespace vin::diagnostics
