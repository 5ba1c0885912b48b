// Getting Python pickles past LibTorch 1.13's unpickler: a rewrite it can then read (it lacks
// the single-item opcodes SETITEM and APPEND, which Python's pickler uses for a dict of one entry
// and a list of one item; each becomes MARK ... SETITEMS / APPENDS, which mean the same). What it
// must not see at all is pickle_safety's concern.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace vin::diagnostics {

/// The rewritten pickle, or nothing when there is nothing to rewrite or the stream holds an
/// opcode this scanner does not know (protocols 0-3 are understood; framed protocol 4+ is not).
std::optional<std::string> rewrite_single_item_opcodes(std::string_view pickle);


}  // namespace vin::diagnostics
