#include "vin/diagnostics/text/type_names.h"

#include <cctype>

namespace vin::diagnostics {
namespace {

constexpr std::string_view kTorchPrefix = "__torch__.";
constexpr std::string_view kManglePrefix = "___torch_mangle_";

// Length of a `___torch_mangle_<digits>.` segment starting at `pos`, or 0 when there is none.
std::size_t mangle_segment_length(std::string_view name, std::size_t pos) {
  if (name.substr(pos, kManglePrefix.size()) != kManglePrefix) return 0;
  std::size_t end = pos + kManglePrefix.size();
  const std::size_t digits_start = end;
  while (end < name.size() && std::isdigit(static_cast<unsigned char>(name[end]))) ++end;
  if (end == digits_start || end >= name.size() || name[end] != '.') return 0;
  return end + 1 - pos;
}

}  // namespace

std::string python_type_name(std::string_view name) {
  if (name.substr(0, kTorchPrefix.size()) == kTorchPrefix) name.remove_prefix(kTorchPrefix.size());
  std::string out;
  out.reserve(name.size());
  std::size_t pos = 0;
  while (pos < name.size()) {
    // a mangle segment only ever starts a dotted component
    if (pos == 0 || name[pos - 1] == '.') {
      if (std::size_t skip = mangle_segment_length(name, pos)) {
        pos += skip;
        continue;
      }
    }
    out.push_back(name[pos++]);
  }
  return out;
}

}  // namespace vin::diagnostics
