#include "vin/diagnostics/pickle/pickle_opcodes.h"

#include <array>

namespace vin::diagnostics {
namespace {

using A = Argument;
using K = StackEffect::Kind;

struct Row {
  Op op;
  OpcodeInfo info;
};

// Every opcode torch.save (Python's pickler, protocol 2) and TorchScript's pickler write, the
// rest of protocols 2-4 that a reader must be able to step over, then what only scan walks.
constexpr Row kRows[] = {
    {Op::PROTO, {"PROTO", A::fixed, 1, {K::none}}},
    {Op::FRAME, {"FRAME", A::fixed, 8, {K::none}}},
    {Op::MARK, {"MARK", A::none, 0, {K::mark}}},
    {Op::STOP, {"STOP", A::none, 0, {K::stop}}},
    {Op::POP, {"POP", A::none, 0, {K::pop}}},
    {Op::POP_MARK, {"POP_MARK", A::none, 0, {K::pop_mark}}},
    {Op::DUP, {"DUP", A::none, 0, {K::dup}}},
    {Op::NONE, {"NONE", A::none, 0, {K::push}}},
    {Op::NEWTRUE, {"NEWTRUE", A::none, 0, {K::push}}},
    {Op::NEWFALSE, {"NEWFALSE", A::none, 0, {K::push}}},
    {Op::BININT, {"BININT", A::fixed, 4, {K::push}}},
    {Op::BININT1, {"BININT1", A::fixed, 1, {K::push}}},
    {Op::BININT2, {"BININT2", A::fixed, 2, {K::push}}},
    {Op::LONG1, {"LONG1", A::counted, 1, {K::push}}},
    {Op::LONG4, {"LONG4", A::counted, 4, {K::push}}},
    {Op::BINFLOAT, {"BINFLOAT", A::fixed, 8, {K::push}}},
    {Op::BINSTRING, {"BINSTRING", A::counted, 4, {K::push}}},
    {Op::SHORT_BINSTRING, {"SHORT_BINSTRING", A::counted, 1, {K::push}}},
    {Op::BINUNICODE, {"BINUNICODE", A::counted, 4, {K::push}}},
    {Op::SHORT_BINUNICODE, {"SHORT_BINUNICODE", A::counted, 1, {K::push}}},
    {Op::BINUNICODE8, {"BINUNICODE8", A::counted, 8, {K::push}}},
    {Op::BINBYTES, {"BINBYTES", A::counted, 4, {K::push}}},
    {Op::SHORT_BINBYTES, {"SHORT_BINBYTES", A::counted, 1, {K::push}}},
    {Op::BINBYTES8, {"BINBYTES8", A::counted, 8, {K::push}}},
    {Op::EMPTY_TUPLE, {"EMPTY_TUPLE", A::none, 0, {K::push}}},
    {Op::EMPTY_LIST, {"EMPTY_LIST", A::none, 0, {K::push}}},
    {Op::EMPTY_DICT, {"EMPTY_DICT", A::none, 0, {K::push}}},
    {Op::EMPTY_SET, {"EMPTY_SET", A::none, 0, {K::push}}},
    {Op::GLOBAL, {"GLOBAL", A::lines, 0, {K::push}}},
    {Op::BINPUT, {"BINPUT", A::fixed, 1, {K::memo_put}}},
    {Op::LONG_BINPUT, {"LONG_BINPUT", A::fixed, 4, {K::memo_put}}},
    {Op::MEMOIZE, {"MEMOIZE", A::none, 0, {K::memo_put}}},
    {Op::BINGET, {"BINGET", A::fixed, 1, {K::memo_get}}},
    {Op::LONG_BINGET, {"LONG_BINGET", A::fixed, 4, {K::memo_get}}},
    {Op::TUPLE1, {"TUPLE1", A::none, 0, {K::build, 1}}},
    {Op::TUPLE2, {"TUPLE2", A::none, 0, {K::build, 2}}},
    {Op::TUPLE3, {"TUPLE3", A::none, 0, {K::build, 3}}},
    {Op::BINPERSID, {"BINPERSID", A::none, 0, {K::build, 1}}},  // the id becomes the object
    {Op::REDUCE, {"REDUCE", A::none, 0, {K::build, 2}}},        // callable, arguments
    {Op::NEWOBJ, {"NEWOBJ", A::none, 0, {K::build, 2}}},        // class, arguments
    {Op::STACK_GLOBAL, {"STACK_GLOBAL", A::none, 0, {K::build, 2}}},
    {Op::NEWOBJ_EX, {"NEWOBJ_EX", A::none, 0, {K::build, 3}}},
    {Op::TUPLE, {"TUPLE", A::none, 0, {K::collect}}},
    {Op::LIST, {"LIST", A::none, 0, {K::collect}}},
    {Op::DICT, {"DICT", A::none, 0, {K::collect}}},
    {Op::FROZENSET, {"FROZENSET", A::none, 0, {K::collect}}},
    {Op::SETITEMS, {"SETITEMS", A::none, 0, {K::extend}}},
    {Op::APPENDS, {"APPENDS", A::none, 0, {K::extend}}},
    {Op::ADDITEMS, {"ADDITEMS", A::none, 0, {K::extend}}},
    {Op::APPEND, {"APPEND", A::none, 0, {K::add, 1}}},    // list, value
    {Op::BUILD, {"BUILD", A::none, 0, {K::add, 1}}},      // object, state
    {Op::SETITEM, {"SETITEM", A::none, 0, {K::add, 2}}},  // dict, key, value
    // the rest of protocols 0-5, for next_any_opcode alone
    {Op::INT, {"INT", A::line, 0, {K::push}, false}},
    {Op::LONG, {"LONG", A::line, 0, {K::push}, false}},
    {Op::FLOAT, {"FLOAT", A::line, 0, {K::push}, false}},
    {Op::STRING, {"STRING", A::line, 0, {K::push}, false}},
    {Op::UNICODE, {"UNICODE", A::line, 0, {K::push}, false}},
    {Op::PERSID, {"PERSID", A::line, 0, {K::push}, false}},  // the id's text is the object
    {Op::PUT, {"PUT", A::line, 0, {K::memo_put}, false}},
    {Op::GET, {"GET", A::line, 0, {K::memo_get}, false}},
    {Op::INST, {"INST", A::lines, 0, {K::collect}, false}},  // module, name; the arguments
    {Op::OBJ, {"OBJ", A::none, 0, {K::collect}, false}},     // the class, then the arguments
    {Op::EXT1, {"EXT1", A::fixed, 1, {K::push}, false}},     // a global by its registry code
    {Op::EXT2, {"EXT2", A::fixed, 2, {K::push}, false}},
    {Op::EXT4, {"EXT4", A::fixed, 4, {K::push}, false}},
    {Op::BYTEARRAY8, {"BYTEARRAY8", A::counted, 8, {K::push}, false}},
    {Op::NEXT_BUFFER, {"NEXT_BUFFER", A::none, 0, {K::push}, false}},
    {Op::READONLY_BUFFER, {"READONLY_BUFFER", A::none, 0, {K::build, 1}, false}},
};

// the rows by opcode byte
const std::array<const OpcodeInfo*, 256>& table() {
  static const std::array<const OpcodeInfo*, 256> by_byte = [] {
    std::array<const OpcodeInfo*, 256> t{};
    for (const Row& row : kRows) t[static_cast<unsigned char>(row.op)] = &row.info;
    return t;
  }();
  return by_byte;
}

}  // namespace

const OpcodeInfo* any_opcode_info(unsigned char op) { return table()[op]; }

const OpcodeInfo* opcode_info(unsigned char op) {
  const OpcodeInfo* info = table()[op];
  return info && info->torch_readers ? info : nullptr;
}

StackEffect stack_effect(unsigned char op) {
  const OpcodeInfo* info = opcode_info(op);
  return info ? info->effect : StackEffect{K::push};
}

namespace {

OpcodeRead read_argument(const OpcodeInfo* info, std::string_view p, std::size_t& pos,
                         PickleOpcode& out) {
  if (!info) return OpcodeRead::unknown;
  switch (info->argument) {
    case A::none:
      return OpcodeRead::ok;
    case A::line:
    case A::lines:
      for (int line = 0; line < (info->argument == A::lines ? 2 : 1); ++line) {
        const std::size_t nl = p.find('\n', pos);
        if (nl == std::string_view::npos) return OpcodeRead::truncated;
        pos = nl + 1;
      }
      return OpcodeRead::ok;
    case A::fixed:
    case A::counted:
      break;
  }
  const std::size_t width = info->width;
  if (width > p.size() - pos) return OpcodeRead::truncated;
  for (std::size_t i = 0; i < width; ++i)
    out.value |= std::uint64_t{static_cast<unsigned char>(p[pos + i])} << (8 * i);
  pos += width;
  if (info->argument == A::counted) {
    out.counted = true;
    if (out.value > p.size() - pos) return OpcodeRead::too_long;
    pos += static_cast<std::size_t>(out.value);
  }
  return OpcodeRead::ok;
}

}  // namespace

OpcodeRead next_opcode(std::string_view p, std::size_t& pos, PickleOpcode& out) {
  out = PickleOpcode{static_cast<unsigned char>(p[pos]), pos};
  ++pos;
  return read_argument(opcode_info(out.op), p, pos, out);
}

OpcodeRead next_any_opcode(std::string_view p, std::size_t& pos, PickleOpcode& out) {
  out = PickleOpcode{static_cast<unsigned char>(p[pos]), pos};
  ++pos;
  return read_argument(any_opcode_info(out.op), p, pos, out);
}

}  // namespace vin::diagnostics
