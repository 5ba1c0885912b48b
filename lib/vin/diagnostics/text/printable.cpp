#include "vin/diagnostics/text/printable.h"

#include <algorithm>

#include "vin/diagnostics/text/utf8.h"

namespace vin::diagnostics {

std::size_t first_invalid_utf8(std::string_view text) {
  for (std::size_t i = 0; i < text.size();) {
    if (static_cast<unsigned char>(text[i]) < 0x80) {
      ++i;
      continue;
    }
    const std::size_t n = utf8_sequence_length(text, i);
    if (n == 0) return i;
    i += n;
  }
  return std::string_view::npos;
}

std::string printable(std::string_view text, std::size_t max_bytes) {
  static const char* hex = "0123456789abcdef";
  std::string out;
  for (std::size_t i = 0; i < text.size();) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    std::string piece;
    if (c >= 0x20 && c < 0x7F) {
      piece.assign(1, static_cast<char>(c));
      i += 1;
    } else if (std::size_t n = c >= 0x80 ? utf8_sequence_length(text, i) : 0) {
      piece.assign(text.substr(i, n));
      i += n;
    } else {
      piece = {'\\', 'x', hex[c >> 4], hex[c & 0xF]};
      i += 1;
    }
    if (out.size() + piece.size() > max_bytes) {
      out += "...";
      break;
    }
    out += piece;
  }
  return out;
}

std::string printable_lines(std::string_view text, std::size_t max_line_bytes) {
  std::string out;
  std::size_t pos = 0;
  while (pos <= text.size()) {
    const std::size_t end = std::min(text.find('\n', pos), text.size());
    if (pos > 0) out += '\n';
    out += printable(text.substr(pos, end - pos), max_line_bytes);
    pos = end + 1;
  }
  return out;
}

}  // namespace vin::diagnostics
