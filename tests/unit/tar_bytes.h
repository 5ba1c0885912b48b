// A tar's bytes for tests, as POSIX ustar writes them: a 512-byte header per member (name, octal
// size, type, the checksum over the header) and the member's bytes padded to 512, then two zero
// blocks.
#pragma once

#include <algorithm>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

struct TarEntry {
  std::string name;
  std::string bytes;
  char type = '0';  ///< '0' a file, '5' a directory, 'x' pax records for the next, 'L' a GNU long name
};

inline std::string tar_header(const std::string& name, std::size_t size, char type) {
  std::string header(512, '\0');
  header.replace(0, std::min<std::size_t>(name.size(), 100), name.substr(0, 100));
  char field[32];  // room for any size_t in octal (GCC's -Wformat-truncation counts it)
  std::snprintf(field, sizeof field, "%011zo", size);
  header.replace(124, 12, field, 12);
  header[156] = type;
  header.replace(257, 8, std::string("ustar\0" "00", 8));
  // the checksum: the header's bytes summed, its own field counted as spaces
  header.replace(148, 8, "        ");
  unsigned sum = 0;
  for (const char c : header) sum += static_cast<unsigned char>(c);
  std::snprintf(field, sizeof field, "%06o", sum);
  header.replace(148, 7, std::string(field, 6) + '\0');
  return header;
}

inline std::string tar_of(const std::vector<TarEntry>& entries) {
  std::string out;
  for (const TarEntry& e : entries) {
    out += tar_header(e.name, e.bytes.size(), e.type) + e.bytes;
    out += std::string((512 - e.bytes.size() % 512) % 512, '\0');
  }
  return out + std::string(1024, '\0');
}

// files of four bytes each, named `names`
inline std::string tar_of(const std::vector<std::string>& names) {
  std::vector<TarEntry> entries;
  for (const std::string& name : names) entries.push_back({name, "data"});
  return tar_of(entries);
}
