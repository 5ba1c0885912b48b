// Text from files (error messages quoting file content, member names, paths) made safe for a
// terminal and for one-line messages.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace vin::diagnostics {

/// Valid UTF-8 text stays as it is; control characters (newlines included) and bytes that are
/// not valid UTF-8 become `\xNN` escapes. Longer results are cut at `max_bytes` and end with
/// "...". Never splits a UTF-8 sequence or an escape.
std::string printable(std::string_view text, std::size_t max_bytes = 400);

/// printable() of each line, the lines kept: for messages of several lines (a TorchScript report,
/// an error with a source position below it). Each line is cut at `max_line_bytes`.
std::string printable_lines(std::string_view text, std::size_t max_line_bytes = 2000);

/// The offset of the first byte of `text` that is not part of valid UTF-8, or npos.
std::size_t first_invalid_utf8(std::string_view text);

}  // namespace vin::diagnostics
