// A tar's members, read from their headers without extracting anything: the classifier tells
// torch.save's tar format (PyTorch 0.1-0.3) from other tars by them, and its reader
// (torch_save_tar.h) reads each member where it lies in the file. ustar headers (POSIX and GNU
// magic), pax extended headers (`path`, `size`) and GNU long names, as Python's tarfile writes
// them; every header's checksum checked, every size within the file.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "vin/diagnostics/container/input_file.h"

namespace vin::diagnostics {

/// A regular file in a tar: its name and where its bytes lie in the tar's file.
struct TarMember {
  std::string name;
  std::uint64_t begin = 0;
  std::uint64_t size = 0;
};

/// What read_tar found: the regular files before the end (or before `most` headers), and, for a
/// tar that goes wrong after its first header, why it cannot be read further.
struct TarContents {
  std::vector<TarMember> members;
  std::optional<std::string> problem;
};

/// The most headers (pax and long-name headers included) read_tar reads by default.
constexpr std::size_t kMaxTarHeaders = 4096;

/// The members of the tar `file`, from at most `most` headers; nothing when its first 512
/// bytes are not a tar header (the ustar magic and a checksum that matches). Directories,
/// links and other entries that are not regular files are passed over.
std::optional<TarContents> read_tar(const InputFile& file, std::size_t most = kMaxTarHeaders);

}  // namespace vin::diagnostics
