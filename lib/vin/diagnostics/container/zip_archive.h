// The one zip reader: a zip file opened once over an InputFile (libzip through a pread window),
// its directory read and checked once, its members found by name through an index. Every zip
// the tool reads (TorchScript archives, torch.save files, .npz files) goes through it.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "vin/diagnostics/container/input_file.h"

struct zip;  // libzip's zip_t

namespace vin::diagnostics {

class ZipArchive {
 public:
  /// One member as the zip directory records it.
  struct Entry {
    std::string name;
    std::uint64_t size = 0;  ///< uncompressed
    std::uint32_t crc = 0;
    /// where a stored (uncompressed) member's bytes begin in the file, as they are: torch.save
    /// and torch.jit.save store every record so (a tensor's bytes are read there, a piece at a
    /// time); nothing for a deflated member
    std::optional<std::uint64_t> stored_at;
  };

  /// Opens the zip in `file`: its directory is read and every member's local header checked
  /// against it (zip_directory.h), libzip must read the same directory, and each member must be
  /// stored or deflated with a size its compressed size can hold (member_problem: nothing is
  /// inflated past what the directory promised). Throws Error naming the file: a truncated or
  /// damaged zip, or the member that cannot be read safely.
  explicit ZipArchive(InputFilePtr file);
  ~ZipArchive();
  ZipArchive(const ZipArchive&) = delete;
  ZipArchive& operator=(const ZipArchive&) = delete;

  const InputFile& file() const { return *file_; }
  /// The file, for a reader that keeps it (LibTorch's, through a read adapter).
  const InputFilePtr& shared_file() const { return file_; }
  const std::string& path() const { return file_->path(); }
  const std::vector<Entry>& entries() const { return entries_; }

  /// The index of the member `name`, or nothing.
  std::optional<std::size_t> find(std::string_view name) const;
  /// Whether a member's name starts with `folder`.
  bool has_entry_under(std::string_view folder) const;
  /// The folder of the first member, with its '/' ("" when it has none or the zip is empty):
  /// where PyTorch's writers put every record.
  std::string first_folder() const;

  /// The whole member `index`, its CRC checked. `label` names it in the error ("PATH: cannot
  /// read the record LABEL (damaged archive: ...)"); throws Error when it is larger than
  /// `max_bytes` ("PATH: the record LABEL is larger than N bytes").
  std::string read(std::size_t index, std::uint64_t max_bytes, std::string_view label) const;
  /// The member `name` (a full name) read as above with its name as the label; nothing when
  /// there is none.
  std::optional<std::string> read(const std::string& name, std::uint64_t max_bytes) const;

  /// A member read piece by piece (an .npz array streamed into its buffer).
  class Member {
   public:
    ~Member();
    Member(Member&& other) noexcept;
    Member(const Member&) = delete;
    Member& operator=(const Member&) = delete;
    Member& operator=(Member&&) = delete;
    /// Up to `n` bytes into `out`; fewer only at the member's end. Throws Error naming `label`
    /// when the member is damaged.
    std::size_t read(void* out, std::size_t n);
    /// Whether no byte is left; reaching the end checks the member's CRC (Error when it does
    /// not match).
    bool at_end();

   private:
    friend class ZipArchive;
    Member(void* file, std::string label) : file_(file), label_(std::move(label)) {}
    [[noreturn]] void fail();
    void* file_;  // libzip's zip_file_t
    std::string label_;
  };
  /// Opens member `index` for reading piece by piece; `label` names it in errors.
  Member open(std::size_t index, std::string label) const;

 private:
  InputFilePtr file_;
  ::zip* zip_ = nullptr;
  std::vector<Entry> entries_;
  std::unordered_map<std::string_view, std::size_t> index_;  // views into entries_' names
};

using ZipArchivePtr = std::shared_ptr<const ZipArchive>;


/// Why a member must not be inflated, or nothing (exposed for the unit tests): only stored and
/// deflated members, with a declared size its compressed size can hold.
std::optional<std::string> zip_member_problem(int method, std::uint64_t size,
                                              std::uint64_t compressed_size);

}  // namespace vin::diagnostics
