// A zip read as a lenient loader would read it (contract 14.3, containers): when the one zip
// reader refuses a file (headers that disagree, a CRC mismatch, an encrypted or unknown-method
// member, a damaged directory), what could a loader still unpickle? torch.load's reader (miniz)
// and Python's zipfile each tolerate things the other refuses: a member whose encryption flag is
// set over plain bytes, a local header whose name or sizes differ from the directory's. So each
// member is taken both as its local header says (walking the headers from the start of the
// file) and as the central directory says (where one can be read), the flags and the CRC
// ignored, stored bytes taken as they are and deflated ones inflated. Only members a loader
// could unpickle are read (named .pkl/.pickle by either header, or starting with a pickle's
// PROTO), and TorchScript source (.py), bounded.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "vin/diagnostics/container/input_file.h"

namespace vin::diagnostics {

/// One member as a lenient reading finds it.
struct LenientMember {
  std::string name;           ///< as the central directory names it (its local header where none)
  std::uint64_t offset = 0;   ///< of its local header
  std::string bytes;          ///< its data, inflated where deflated (at most the limit below)
  bool pickle_named = false;  ///< named .pkl or .pickle
  bool read = false;  ///< whether `bytes` were read: a member a loader could unpickle, or a .py
};

/// What a lenient reading reads at most.
struct LenientZipLimits {
  std::size_t max_members = 200000;                           ///< local headers looked at
  std::uint64_t max_member_bytes = std::uint64_t{256} << 20;  ///< of one member kept, inflated
  std::uint64_t max_total_bytes = std::uint64_t{512} << 20;   ///< of all members kept
  /// inflated in all, kept or only walked past (a member of unknown size inflated to find its
  /// end): a walk of many small bombs ends here
  std::uint64_t max_inflated_bytes = std::uint64_t{4} << 30;
};

/// The members of the zip in `file`, those a loader could unpickle read leniently. Never throws
/// for what the file holds (a header cut short ends the walk); throws Error only when the
/// system refuses a read.
std::vector<LenientMember> read_zip_leniently(const InputFile& file, LenientZipLimits limits = {});

}  // namespace vin::diagnostics
