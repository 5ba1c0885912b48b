#include "vin/diagnostics/diff/record_matching.h"

namespace vin::diagnostics::diff_detail {

// A tensor's name as named_parameters() / named_buffers() spell it: `layer1.0.conv1.weight`
// (--strip-prefix's prefixes taken off).
std::string tensor_key(RecordList::Record tensor, const DiffGate& gate) {
  const std::string_view module_text = tensor.find(names().module_path)->text();
  const std::string_view name_text = tensor.find(names().name)->text();
  if (!json_string(module_text) || !json_string(name_text))
    throw Error("a TensorMetadata whose module_path or name is not a string");
  const std::string module = json_string_value(module_text);
  const std::string name = json_string_value(name_text);
  return gate.stripped(module == kRootPath ? name : module + "." + name);
}

}  // namespace vin::diagnostics::diff_detail
