// Where the records go: standard output or an `-o` file, every write checked. A file is written
// beside its target under a temporary name and renamed over it only once complete, so a failed
// write leaves the old file (or none), never a partial one.
#pragma once

#include <string>
#include <string_view>

#include "vin/diagnostics/records/error.h"

namespace vin::diagnostics {

/// The reader of standard output went away (EPIPE): the output is incomplete, but like other
/// Unix tools the program ends quietly, without a message.
class OutputClosed : public Error {
 public:
  OutputClosed() : Error("standard output was closed") {}
};

/// Writes `text` to standard output when `target` is empty or "-", else to the file `target`.
/// A regular file (or a new one) is written to a temporary file in the same folder, then renamed
/// over `target`; anything else that exists there (a device such as /dev/null, a FIFO) is written
/// in place. Throws OutputClosed on EPIPE, and Error naming `target` (or "standard output") and
/// the system's reason for any other failed open, write, close or rename.
void write_output(const std::string& target, std::string_view text);

}  // namespace vin::diagnostics
