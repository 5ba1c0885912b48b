// Shared by the fuzz targets: the readers under test take a path, so each input is written to a
// scratch file first (one per process; libFuzzer's -jobs/-fork workers each get their own),
// removed when the process exits normally (the regression replays in CTest run without a TMPDIR
// of their own, so a file left behind would litter /tmp).
#pragma once

#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <string>

namespace vin::fuzz {

/// Writes `data` to this process's scratch file (with `suffix`, as the reader may look at the
/// file name) and returns its path.
inline const std::string& write_scratch_file(const std::uint8_t* data, std::size_t size,
                                             const std::string& suffix) {
  static const std::string path = [&] {
    const char* dir = std::getenv("TMPDIR");
    return std::string(dir && *dir ? dir : "/tmp") + "/vin-fuzz-" + std::to_string(::getpid()) +
           suffix;
  }();
  static const bool removed_at_exit = [] {
    return std::atexit([] { ::unlink(path.c_str()); }) == 0;
  }();
  (void)removed_at_exit;
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  out.close();
  if (!out) std::abort();  // a full disk is the harness's problem, not a finding
  return path;
}

}  // namespace vin::fuzz
