#include "vin/diagnostics/pickle_opcodes.h"

namespace vin::diagnostics {

StackEffect stack_effect(unsigned char op) {
  using K = StackEffect::Kind;
  switch (op) {
    case 0x80:
    case 0x95:
      return {K::none};  // PROTO, FRAME
    case '(':
      return {K::mark};
    case '.':
      return {K::stop};
    case 'q':
    case 'r':
    case 0x94:
      return {K::memo_put};  // BINPUT, LONG_BINPUT, MEMOIZE
    case 'h':
    case 'j':
      return {K::memo_get};  // BINGET, LONG_BINGET
    case 0x85:
      return {K::build, 1};  // TUPLE1
    case 0x86:
      return {K::build, 2};  // TUPLE2
    case 0x87:
      return {K::build, 3};  // TUPLE3
    case 'Q':
      return {K::build, 1};  // BINPERSID: the persistent id becomes the object
    case 'R':
    case 0x81:
    case 0x93:
      return {K::build, 2};  // REDUCE, NEWOBJ, STACK_GLOBAL
    case 0x92:
      return {K::build, 3};  // NEWOBJ_EX
    case 't':
    case 'l':
    case 'd':
    case 0x91:
      return {K::collect};  // TUPLE, LIST, DICT, FROZENSET
    case 'u':
    case 'e':
    case 0x90:
      return {K::extend};  // SETITEMS, APPENDS, ADDITEMS
    case 'a':
      return {K::add, 1};  // APPEND: list value
    case 'b':
      return {K::add, 1};  // BUILD: object state
    case 's':
      return {K::add, 2};  // SETITEM: dict key value
    case '0':
      return {K::pop};
    case '1':
      return {K::pop_mark};
    case '2':
      return {K::dup};
    default:
      return {K::push};  // numbers, strings, bytes, None, booleans, GLOBAL, EMPTY_*
  }
}

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
