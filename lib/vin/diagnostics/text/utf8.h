// UTF-8 as the tool checks it, once: for the terminal (text/printable) and for JSON
// (records/json_encoding, which writes a byte that is not UTF-8 as Python's surrogateescape does).
#pragma once

#include <cstddef>
#include <string_view>

namespace vin::diagnostics {

/// Length of the valid UTF-8 sequence starting at text[i] (1 for ASCII), or 0 when the bytes
/// there are not one (a stray continuation byte, an overlong form, an encoded surrogate, past
/// U+10FFFF, or cut short by the end of `text`).
std::size_t utf8_sequence_length(std::string_view text, std::size_t i);

/// The code point of the valid sequence of `length` bytes at text[i].
char32_t utf8_code_point(std::string_view text, std::size_t i, std::size_t length);

}  // namespace vin::diagnostics
