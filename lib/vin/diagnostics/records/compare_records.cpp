#include "vin/diagnostics/records/compare_records.h"

namespace vin::diagnostics {

std::string TensorKey::name() const {
  std::string out = module_path + "/" + std::to_string(call_index) + "/" + to_string(direction);
  for (const auto& p : tensor_path) out += "/" + p;
  return out;
}

std::optional<TensorKey> TensorKey::from_name(const std::string& name) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  while (true) {
    const std::size_t slash = name.find('/', start);
    parts.push_back(name.substr(start, slash - start));
    if (slash == std::string::npos) break;
    start = slash + 1;
  }
  if (parts.size() < 4 || parts[0].empty() || parts[1].empty() || parts[1].size() > 18 ||
      parts[1].find_first_not_of("0123456789") != std::string::npos)
    return std::nullopt;
  TensorKey key;
  key.module_path = parts[0];
  key.call_index = std::stoll(parts[1]);
  if (parts[2] == "input")
    key.direction = Direction::input;
  else if (parts[2] == "output")
    key.direction = Direction::output;
  else
    return std::nullopt;
  key.tensor_path.assign(parts.begin() + 3, parts.end());
  return key;
}

}  // namespace vin::diagnostics
