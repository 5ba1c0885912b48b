// The argument layout of the pickle opcodes that torch.save and TorchScript write (protocols
// 0-4): one table for every walk over a pickle in this project (pickle_rewrite's rewrite and
// size check, pickle_reader).
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

/// Decodes the opcode at `pos` and its argument (little-endian numbers; GLOBAL's two lines),
/// leaving `pos` past the argument when it returns OpcodeRead::ok.
OpcodeRead next_opcode(std::string_view p, std::size_t& pos, PickleOpcode& out);

}  // namespace vin::diagnostics
