// BYTES("...") : a string literal's bytes, NULs included (the pickle tests write opcodes as
// literals).
#pragma once

#include <cstddef>
#include <string>

// (a hex escape swallows every hex digit after it: "\x00" "aq" keeps the 'a' a letter)
inline std::string literal_bytes(const char* text, std::size_t n) { return std::string(text, n); }
#define BYTES(literal) literal_bytes(literal, sizeof(literal) - 1)
