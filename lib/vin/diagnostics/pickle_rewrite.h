// Getting Python pickles past LibTorch 1.13's unpickler: a rewrite it can then read (it lacks
// the single-item opcodes SETITEM and APPEND, which Python's pickler uses for a dict of one entry
// and a list of one item; each becomes MARK ... SETITEMS / APPENDS, which mean the same), and a
// check of what it would trust.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace vin::diagnostics {

/// The rewritten pickle, or nothing when there is nothing to rewrite or the stream holds an
/// opcode this scanner does not know (protocols 0-3 are understood; framed protocol 4+ is not).
std::optional<std::string> rewrite_single_item_opcodes(std::string_view pickle);

/// Why `pickle` must not reach LibTorch's unpickler, or nothing. LibTorch 1.13 sizes its memo
/// table from a BINPUT/LONG_BINPUT index and its buffers from a length prefix before checking
/// either against the data (one changed byte can make it allocate tens of gigabytes), and pops
/// its stack without looking (a short stack corrupts its memory); both found by
/// torch_save_fuzzer. Refused: a memo index larger than the pickle (a pickler numbers its memo
/// entries from 0, one per PUT), a length prefix longer than the bytes that follow it, and an
/// opcode that takes more values than the stack holds above the last MARK, or needs a MARK when
/// none is open. The scan stops at STOP or at an opcode it does not know (LibTorch refuses those
/// itself).
std::optional<std::string> pickle_problem(std::string_view pickle);

}  // namespace vin::diagnostics
