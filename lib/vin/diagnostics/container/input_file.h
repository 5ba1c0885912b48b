// A file the tool reads, opened once. Every reader of one file (the classifier, the zip, .npy,
// YAML and record readers, LibTorch's archive reader) reads it through this one descriptor, so
// nothing is opened or read twice. A file that cannot be read twice (a pipe, process
// substitution, /dev/stdin, a socket) is copied once, as it is opened, into an anonymous
// temporary file, and reads then seek in that copy as in any file (docs/inputs.md, Streams).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <streambuf>
#include <string>
#include <string_view>
#include <vector>

namespace vin::diagnostics {

class InputFile {
 public:
  /// The most a stream may hold when it starts as a binary format (zip, pickle, .npy) does...
  static constexpr std::uint64_t kMaxBinaryStreamBytes = std::uint64_t{64} << 30;
  /// ...and when it starts as text does (YAML, JSON records: the largest text any reader takes).
  static constexpr std::uint64_t kMaxTextStreamBytes = std::uint64_t{1} << 30;
  /// How many of the first bytes head() holds.
  static constexpr std::size_t kHeadBytes = 64;

  /// Whether a stream's first bytes start a binary format its reader takes (the format table's
  /// starts_a_binary_format, formats/file_kind.h): such a stream may be as long as an archive.
  using HeadTest = bool (*)(std::string_view head);

  /// Opens `path` for reading. Throws Error naming the file: no such file, a directory ("PATH:
  /// is a directory, not WHAT" when `what` is given), cannot be opened, a stream longer than its
  /// limit above, or no room in the temporary folder ($TMPDIR, else /tmp) for a stream's copy.
  /// A stream (a pipe) is copied: as long as a binary format may be where `binary` says its head
  /// starts one, as long as text may be where it is text, and refused otherwise (a stream of
  /// random bytes is not read to its end; without `binary`, text alone). Nothing is written to
  /// `path`.
  static std::shared_ptr<const InputFile> open(const std::string& path, std::string_view what = {},
                                               HeadTest binary = nullptr);

  /// `bytes` as a file of their own (a zip nested in a member of another), named `label` in
  /// messages: held in an anonymous temporary file, gone with the InputFile. Throws Error naming
  /// `label` when the temporary folder has no room.
  static std::shared_ptr<const InputFile> from_bytes(const std::string& label,
                                                     std::string_view bytes);
  /// The same for bytes `next` hands out a piece at a time (up to `n` into `out`; 0 at the end),
  /// so that a large member is never held in memory whole.
  static std::shared_ptr<const InputFile> from_pieces(
      const std::string& label, const std::function<std::size_t(char* out, std::size_t n)>& next);

  ~InputFile();
  InputFile(const InputFile&) = delete;
  InputFile& operator=(const InputFile&) = delete;

  const std::string& path() const { return path_; }
  std::uint64_t size() const { return size_; }
  /// Whether the file was a stream, read into a temporary copy.
  bool copied_from_stream() const { return copied_; }
  /// The descriptor every read goes through (for readers that take one, such as libzip's).
  int descriptor() const { return fd_; }

  /// The first bytes of the file (kHeadBytes, fewer in a shorter file).
  std::string_view head() const { return head_; }
  bool starts_with(std::string_view magic) const {
    return head_.size() >= magic.size() && head_.compare(0, magic.size(), magic) == 0;
  }

  /// Reads up to `n` bytes at `offset` into `out`; fewer only at the end of the file. Throws
  /// Error naming the file when the system refuses the read.
  std::size_t read_at(std::uint64_t offset, void* out, std::size_t n) const;

  /// The whole file. Throws Error naming the file when it is larger than `max_bytes`
  /// ("PATH: N bytes is too large for WHAT").
  std::string read_all(std::uint64_t max_bytes, std::string_view what) const;

 private:
  InputFile(std::string path, int fd, std::uint64_t size, bool copied);

  std::string path_;
  int fd_ = -1;
  std::uint64_t size_ = 0;
  bool copied_ = false;
  std::string head_;
};

using InputFilePtr = std::shared_ptr<const InputFile>;

/// The file as a std::streambuf (reads of 64 KiB through read_at; seekable), for parsers that
/// take a std::istream: `InputFileBuffer buffer(file); std::istream in(&buffer);`.
class InputFileBuffer : public std::streambuf {
 public:
  explicit InputFileBuffer(const InputFile& file) : file_(file), buffer_(kBufferBytes) {}

 protected:
  int_type underflow() override;
  pos_type seekoff(off_type off, std::ios_base::seekdir dir,
                   std::ios_base::openmode which) override;
  pos_type seekpos(pos_type pos, std::ios_base::openmode which) override;

 private:
  static constexpr std::size_t kBufferBytes = 64 * 1024;
  const InputFile& file_;
  std::vector<char> buffer_;
  std::uint64_t buffer_start_ = 0;  // the file offset of buffer_[0]
};

/// Small reads anywhere in a file through one window of kWindowBytes, which a read outside it
/// moves: readers that walk a file's structures in pieces (a zip's directory and local headers)
/// make one system call per window instead of one per piece.
class WindowedReader {
 public:
  static constexpr std::size_t kWindowBytes = 64 * 1024;

  explicit WindowedReader(const InputFile& file) : file_(file), window_(kWindowBytes) {}

  /// The `n` bytes at `offset` (n at most kWindowBytes), fewer only at the file's end; valid
  /// until the next call. Throws Error naming the file when the system refuses the read.
  std::string_view at(std::uint64_t offset, std::size_t n);

 private:
  const InputFile& file_;
  std::vector<char> window_;
  std::uint64_t window_start_ = 0;
  std::size_t window_bytes_ = 0;  // bytes of the file held, from window_start_
};

}  // namespace vin::diagnostics
