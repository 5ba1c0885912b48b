// Zip-level checks of a TorchScript archive, made before LibTorch sees the file, so that a wrong
// file gets a message saying what it is instead of a deserialisation error. Uses libzip only.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

struct zip;  // libzip's zip_t

namespace vin::diagnostics {

/// What probe_torchscript_archive learnt about an archive.
struct ArchiveLayout {
  std::string record_prefix;     ///< the archive's top folder with a trailing '/', e.g. "net/"
  std::uint64_t format_version;  ///< the `version` record: the file format version it needs
  /// The zip as the probe opened it, its directory read (and checked) once: the reads below
  /// given this layout use it instead of opening the file again (10,011 members cost 10 ms a
  /// directory). Empty in a layout made by hand; those reads then open the file themselves.
  std::shared_ptr<struct zip> opened;
};

/// Checks that `path` is a readable file, a complete zip archive whose members are all stored or
/// deflated with sizes they can hold (check_zip_members), and a TorchScript archive (not a
/// torch.save file or another zip), and reads its format version. Throws Error naming the file
/// and the problem otherwise. Reads the zip directory and the small `version` record only.
ArchiveLayout probe_torchscript_archive(const std::string& path);

/// The archive's record `name` (relative to its top folder, e.g. "extra/config.yaml"), or
/// nothing when it has none. Reads that one record only. Throws Error when the record is larger
/// than `max_bytes` or cannot be read.
std::optional<std::string> read_archive_record(const std::string& path, const ArchiveLayout& layout,
                                               const std::string& name, std::size_t max_bytes);

/// CRC-32s as 8 lowercase hex digits, by record name.
using RecordChecksums = std::unordered_map<std::string, std::string>;

/// The archive's records whose names (relative to its top folder) `wanted` accepts, in the zip
/// directory's order, as (name, bytes). Reads those records only. Throws Error when one is
/// larger than `max_bytes`, when together they are larger than `max_total_bytes`, or when one
/// cannot be read (a damaged archive). When `data_checksums` is given, it receives the CRC-32
/// that the zip directory records for each record under data/ (the tensor storages, by the name
/// after "data/"), from the same pass over the directory and without reading them.
std::vector<std::pair<std::string, std::string>> read_archive_records(
    const std::string& path, const ArchiveLayout& layout,
    const std::function<bool(std::string_view)>& wanted, std::size_t max_bytes,
    std::size_t max_total_bytes, RecordChecksums* data_checksums = nullptr);

/// Bounds on an archive's code/ before LibTorch compiles it, with the maxima measured on every
/// torchvision model beside them (README, Safety).
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
void check_archive_records(const std::string& path, const ArchiveLayout& layout);

/// A zip file opened once to read members by name (a torch.save file's data.pkl and storages).
class ZipMembers {
 public:
  /// Opens `path` (check_zip_members first); throws Error naming the file when it cannot.
  explicit ZipMembers(const std::string& path);
  ~ZipMembers();
  ZipMembers(const ZipMembers&) = delete;
  ZipMembers& operator=(const ZipMembers&) = delete;

  /// The folder of the first member, with its '/': where PyTorch's writers put every record.
  const std::string& prefix() const { return prefix_; }
  /// The member `name` (a full name), its CRC checked; nothing when there is none. Throws Error
  /// when it is larger than `max_bytes` or damaged.
  std::optional<std::string> read(const std::string& name, std::size_t max_bytes) const;

 private:
  std::string path_;
  std::string prefix_;
  struct Handle;
  Handle* handle_;
};

/// Refuses (Error naming the file and member) a zip file with a member that is neither stored nor
/// deflated (what torch.save, torch.jit.save and numpy write, and all LibTorch reads), or whose
/// declared size its compressed size cannot hold (a stored member of another size, a deflated one
/// expanding more than deflate can): nothing is inflated past what its directory promised.
/// Files that are not readable zip archives are left to the reader that follows.
void check_zip_members(const std::string& path);

/// Whether the record `name` (relative to the archive's top folder) is TorchScript source:
/// code/**.py.
bool is_code_record(std::string_view name);

/// Whether the file at `path` begins with the bytes `magic` (false when it cannot be read).
bool file_starts_with(const std::string& path, std::string_view magic);

/// The member names of the zip archive at `path`; empty when it is not a readable zip archive.
std::vector<std::string> zip_member_names(const std::string& path);

/// Whether `path` looks like a TorchScript archive (a zip with a data.pkl or code/ under its top
/// folder) rather than, say, an .npz of saved tensors. Reads the zip directory only; files that
/// are neither are for the reader that follows to refuse.
bool is_torchscript_archive(const std::string& path);

}  // namespace vin::diagnostics
