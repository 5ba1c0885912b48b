// The pickle opcodes of protocols 0-5, as one table: each opcode's name, argument layout and
// stack effect, and whether the readers of torch's pickles step over it. Every walk over a
// pickle in this project reads opcodes through next_opcode (pickle_safety's scan,
// pickle_reader: the opcodes torch.save and TorchScript write and the rest of protocols 2-4) or
// next_any_opcode (scan: every opcode Python's unpickler runs) and names them with Op.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace vin::diagnostics {

/// The opcodes by name (Python's pickletools names).
enum class Op : unsigned char {
  MARK = '(',
  STOP = '.',
  POP = '0',
  POP_MARK = '1',
  DUP = '2',
  BINFLOAT = 'G',
  BININT = 'J',
  BININT1 = 'K',
  BININT2 = 'M',
  NONE = 'N',
  BINPERSID = 'Q',
  REDUCE = 'R',
  BINSTRING = 'T',
  SHORT_BINSTRING = 'U',
  BINUNICODE = 'X',
  BINBYTES = 'B',
  SHORT_BINBYTES = 'C',
  APPEND = 'a',
  BUILD = 'b',
  GLOBAL = 'c',
  DICT = 'd',
  APPENDS = 'e',
  BINGET = 'h',
  LONG_BINGET = 'j',
  LIST = 'l',
  BINPUT = 'q',
  LONG_BINPUT = 'r',
  SETITEM = 's',
  TUPLE = 't',
  SETITEMS = 'u',
  EMPTY_TUPLE = ')',
  EMPTY_LIST = ']',
  EMPTY_DICT = '}',
  PROTO = 0x80,
  NEWOBJ = 0x81,
  TUPLE1 = 0x85,
  TUPLE2 = 0x86,
  TUPLE3 = 0x87,
  NEWTRUE = 0x88,
  NEWFALSE = 0x89,
  LONG1 = 0x8a,
  LONG4 = 0x8b,
  SHORT_BINUNICODE = 0x8c,
  BINUNICODE8 = 0x8d,
  BINBYTES8 = 0x8e,
  EMPTY_SET = 0x8f,
  ADDITEMS = 0x90,
  FROZENSET = 0x91,
  NEWOBJ_EX = 0x92,
  STACK_GLOBAL = 0x93,
  MEMOIZE = 0x94,
  FRAME = 0x95,
  // protocol 0's text forms, the extension registry, protocol 5's buffers: Python's unpickler
  // runs them; torch's pickles never hold them
  INT = 'I',
  LONG = 'L',
  FLOAT = 'F',
  STRING = 'S',
  UNICODE = 'V',
  PERSID = 'P',
  PUT = 'p',
  GET = 'g',
  INST = 'i',
  OBJ = 'o',
  EXT1 = 0x82,
  EXT2 = 0x83,
  EXT4 = 0x84,
  BYTEARRAY8 = 0x96,
  NEXT_BUFFER = 0x97,
  READONLY_BUFFER = 0x98,
};

/// What an opcode does to the unpickler's stack.
struct StackEffect {
  enum Kind {
    none,      ///< PROTO, FRAME
    mark,      ///< MARK: opens a mark
    stop,      ///< STOP: takes the one value left
    push,      ///< a new leaf value: numbers, strings, GLOBAL, EMPTY_TUPLE/LIST/DICT
    memo_put,  ///< BINPUT, LONG_BINPUT, MEMOIZE: remembers the top value, keeps it
    memo_get,  ///< BINGET, LONG_BINGET: pushes a remembered value
    build,     ///< takes `takes` values, pushes one made of them (TUPLE1..3, REDUCE, NEWOBJ, ...)
    collect,   ///< takes everything above the last MARK and the MARK, pushes one made of them
    extend,    ///< like collect, but adds them to the container below the MARK (SETITEMS, APPENDS)
    add,       ///< takes `takes` values into the container below them (APPEND, SETITEM, BUILD)
    pop,       ///< POP
    pop_mark,  ///< POP_MARK: drops everything above the last MARK and the MARK
    dup,       ///< DUP
  };
  Kind kind = none;
  unsigned takes = 0;  ///< for build and add
};

/// How an opcode's argument follows it.
enum class Argument {
  none,     ///< no argument
  fixed,    ///< `width` bytes, a little-endian number
  counted,  ///< a `width`-byte little-endian length, then that many bytes
  lines,    ///< two newline-terminated lines (GLOBAL's and INST's module and name)
  line,     ///< one newline-terminated line (protocol 0's INT, STRING, PUT, ...)
};

/// One row of the table.
struct OpcodeInfo {
  const char* name;
  Argument argument;
  unsigned width;
  StackEffect effect;
  /// whether the readers of torch's pickles (opcode_info, next_opcode) know it; the others are
  /// for next_any_opcode alone
  bool torch_readers = true;
};

/// The table's row for `op`, or null for an opcode outside protocols 0-4 as torch.save and
/// TorchScript write them (protocol 0's text forms, the extension registry and protocol 5
/// included: torch's readers refuse those).
const OpcodeInfo* opcode_info(unsigned char op);
/// The table's row for any opcode of protocols 0-5, or null for a byte that is none.
const OpcodeInfo* any_opcode_info(unsigned char op);

/// The stack effect of `op` (an opcode opcode_info knows).
StackEffect stack_effect(unsigned char op);

/// One opcode and its argument.
struct PickleOpcode {
  unsigned char op = 0;
  std::size_t at = 0;       // offset of the opcode byte
  std::uint64_t value = 0;  // a fixed-width argument, or a counted argument's length
  bool counted = false;     // the argument is a length prefix and that many bytes
};

enum class OpcodeRead {
  ok,         // `out` holds the opcode; `pos` is past its argument
  truncated,  // the argument runs past the end of the stream
  too_long,   // a length prefix (in out.value) longer than the bytes after it
  unknown,    // an opcode outside protocols 0-4 as torch.save and TorchScript write them
};

/// Decodes the opcode at `pos` and its argument (little-endian numbers; GLOBAL's two lines),
/// leaving `pos` past the argument when it returns OpcodeRead::ok; an opcode opcode_info does
/// not know is OpcodeRead::unknown.
OpcodeRead next_opcode(std::string_view p, std::size_t& pos, PickleOpcode& out);
/// The same for every opcode of protocols 0-5 (any_opcode_info); a line argument's bytes are
/// p.substr(out.at + 1, pos - out.at - 2) (the newline left out).
OpcodeRead next_any_opcode(std::string_view p, std::size_t& pos, PickleOpcode& out);

/// Whether `code` is the opcode `op`.
inline bool is(const PickleOpcode& code, Op op) {
  return code.op == static_cast<unsigned char>(op);
}

}  // namespace vin::diagnostics
