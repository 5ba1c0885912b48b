// The argument layout and stack effect of the pickle opcodes that torch.save and TorchScript
// write (protocols 0-4): one table for every walk over a pickle in this project (pickle_safety's
// scan, pickle_reader).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace vin::diagnostics {

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

/// What an opcode does to the unpickler's stack (for the opcodes next_opcode reads).
struct StackEffect {
  enum Kind {
    none,     ///< PROTO, FRAME
    mark,     ///< MARK: opens a mark
    stop,     ///< STOP: takes the one value left
    push,     ///< a new leaf value: numbers, strings, GLOBAL, EMPTY_TUPLE/LIST/DICT
    memo_put, ///< BINPUT, LONG_BINPUT, MEMOIZE: remembers the top value, keeps it
    memo_get, ///< BINGET, LONG_BINGET: pushes a remembered value
    build,    ///< takes `takes` values, pushes one made of them (TUPLE1..3, REDUCE, NEWOBJ, ...)
    collect,  ///< takes everything above the last MARK and the MARK, pushes one made of them
    extend,   ///< like collect, but adds them to the container below the MARK (SETITEMS, APPENDS)
    add,      ///< takes `takes` values into the container below them (APPEND, SETITEM, BUILD)
    pop,      ///< POP
    pop_mark, ///< POP_MARK: drops everything above the last MARK and the MARK
    dup,      ///< DUP
  };
  Kind kind = none;
  unsigned takes = 0;  ///< for build and add
};

/// The stack effect of `op`, one of the opcodes next_opcode reads.
StackEffect stack_effect(unsigned char op);

/// Decodes the opcode at `pos` and its argument (little-endian numbers; GLOBAL's two lines),
/// leaving `pos` past the argument when it returns OpcodeRead::ok.
OpcodeRead next_opcode(std::string_view p, std::size_t& pos, PickleOpcode& out);

}  // namespace vin::diagnostics
