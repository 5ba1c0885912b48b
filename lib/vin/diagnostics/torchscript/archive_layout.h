// Zip-level checks of a TorchScript archive, made before LibTorch sees the file: its layout and
// records, their checksums, its pickles and code scanned. Uses libzip only.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "vin/diagnostics/container/zip_archive.h"

namespace vin::diagnostics {

/// A TorchScript archive's layout (read_archive_layout; formats/model_file.h's
/// open_torchscript_archive opens a file as one).
struct ArchiveLayout {
  std::string record_prefix;     ///< the archive's top folder with a trailing '/', e.g. "net/"
  std::uint64_t format_version;  ///< the `version` record: the file format version it needs
  /// The archive, opened once with its directory read and checked: every read below goes
  /// through it (10,011 members cost 10 ms a directory), and so does LibTorch's load.
  ZipArchivePtr zip;

  const std::string& path() const { return zip->path(); }
};

/// The layout of `zip`, a TorchScript archive (its top folder, and its format version from the
/// small `version` record). Throws Error naming the file when the version record is missing or
/// malformed.
ArchiveLayout read_archive_layout(ZipArchivePtr zip);

/// The archive's record `name` (relative to its top folder, e.g. "extra/config.yaml"), or
/// nothing when it has none. Reads that one record only. Throws Error when the record is larger
/// than `max_bytes` or cannot be read.
std::optional<std::string> read_archive_record(const ArchiveLayout& layout, const std::string& name,
                                               std::size_t max_bytes);

/// CRC-32s as 8 lowercase hex digits, by record name.
using RecordChecksums = std::unordered_map<std::string, std::string>;

/// The archive's records whose names (relative to its top folder) `wanted` accepts, in the zip
/// directory's order, as (name, bytes). Reads those records only. Throws Error when one is
/// larger than `max_bytes`, when together they are larger than `max_total_bytes`, or when one
/// cannot be read (a damaged archive). When `data_checksums` is given, it receives the CRC-32
/// that the zip directory records for each record under data/ (the tensor storages, by the name
/// after "data/"), from the same pass over the directory and without reading them.
std::vector<std::pair<std::string, std::string>> read_archive_records(
    const ArchiveLayout& layout, const std::function<bool(std::string_view)>& wanted,
    std::size_t max_bytes, std::size_t max_total_bytes, RecordChecksums* data_checksums = nullptr);

/// Bounds on an archive's code/ before LibTorch compiles it, with the maxima measured on every
/// torchvision model beside them (docs/safety.md).
struct CodeLimits {
  std::size_t max_bytes = std::size_t{32} << 20;  ///< all of code/ (densenet201: 421,495)
  std::size_t max_lines = 250000;                 ///< all of code/ (densenet201: 11,426)
  std::size_t max_brackets = 100;                 ///< (), [] and {} nesting (measured: 4)
  std::size_t max_indent = 100;                   ///< block nesting, 2 spaces a level (16)
};
inline constexpr CodeLimits kCodeLimits{};

/// Why LibTorch must not compile this code/ (records as (name, source)), or nothing.
std::optional<std::string> code_problem(
    const std::vector<std::pair<std::string_view, std::string_view>>& code,
    const CodeLimits& limits = kCodeLimits);

/// Refuses (Error naming the file and record) an archive that LibTorch would read blindly: a
/// pickle (data.pkl, constants.pkl, code/**.debug_pkl) or code/ source whose bytes do not match
/// their zip checksum (LibTorch checks none), a pickle that pickle_problem refuses, or code/ that
/// code_problem refuses. Call before torch::jit::load. Reads those records only, never data/.
void check_archive_records(const ArchiveLayout& layout);

/// Whether the record `name` (relative to the archive's top folder) is TorchScript source:
/// code/**.py.
bool is_code_record(std::string_view name);

}  // namespace vin::diagnostics
