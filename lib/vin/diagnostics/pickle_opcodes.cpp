#include "vin/diagnostics/pickle_opcodes.h"

namespace vin::diagnostics {

OpcodeRead next_opcode(std::string_view p, std::size_t& pos, PickleOpcode& out) {
  out = PickleOpcode{static_cast<unsigned char>(p[pos]), pos};
  ++pos;
  std::size_t width = 0;  // of the fixed argument or of the length prefix
  switch (out.op) {
    case 0x80:
    case 'K':
    case 'h':
    case 'q':  // PROTO, BININT1, BINGET, BINPUT
      width = 1;
      break;
    case 'M':  // BININT2
      width = 2;
      break;
    case 'J':
    case 'j':
    case 'r':  // BININT, LONG_BINGET, LONG_BINPUT
      width = 4;
      break;
    case 'G':
    case 0x95:  // BINFLOAT, FRAME
      width = 8;
      break;
    case 0x8a:
    case 0x8c:
    case 'U':
    case 'C':  // LONG1, SHORT_BINUNICODE/STRING/BYTES
      width = 1;
      out.counted = true;
      break;
    case 0x8b:
    case 'X':
    case 'T':
    case 'B':  // LONG4, BINUNICODE, BINSTRING, BINBYTES
      width = 4;
      out.counted = true;
      break;
    case 0x8d:
    case 0x8e:  // BINUNICODE8, BINBYTES8
      width = 8;
      out.counted = true;
      break;
    case 'c':  // GLOBAL: module and name, each ended by a newline
      for (int line = 0; line < 2; ++line) {
        const std::size_t nl = p.find('\n', pos);
        if (nl == std::string_view::npos) return OpcodeRead::truncated;
        pos = nl + 1;
      }
      return OpcodeRead::ok;
    case '.':
    case '(':
    case 'N':
    case 0x88:
    case 0x89:
    case ')':
    case ']':
    case '}':
    case 0x94:
    case 't':
    case 'l':
    case 'd':
    case 0x85:
    case 0x86:
    case 0x87:
    case 'R':
    case 0x81:
    case 'Q':
    case 'b':
    case 'u':
    case 'e':
    case 's':
    case 'a':
    case '0':
    case '1':
    case '2':
    case 0x8f:
    case 0x90:
    case 0x91:
    case 0x92:
    case 0x93:
      return OpcodeRead::ok;  // no argument
    default:
      return OpcodeRead::unknown;
  }
  if (width > p.size() - pos) return OpcodeRead::truncated;
  for (std::size_t i = 0; i < width; ++i)
    out.value |= std::uint64_t{static_cast<unsigned char>(p[pos + i])} << (8 * i);
  pos += width;
  if (out.counted) {
    if (out.value > p.size() - pos) return OpcodeRead::too_long;
    pos += static_cast<std::size_t>(out.value);
  }
  return OpcodeRead::ok;
}

}  // namespace vin::diagnostics
