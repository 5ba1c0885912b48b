#include "vin/diagnostics/container/input_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "vin/diagnostics/records/error.h"
#include "vin/diagnostics/text/printable.h"

namespace vin::diagnostics {
namespace {

// Closes the descriptor when the opening fails half-way.
struct Descriptor {
  int fd = -1;
  ~Descriptor() {
    if (fd >= 0) ::close(fd);
  }
  int release() {
    const int out = fd;
    fd = -1;
    return out;
  }
};

std::string temporary_folder() {
  const char* tmpdir = std::getenv("TMPDIR");
  return tmpdir && *tmpdir ? tmpdir : "/tmp";
}

// A file in the temporary folder that no name points at: gone when its descriptor is closed.
int anonymous_temporary_file(const std::string& path) {
  const std::string folder = temporary_folder();
#ifdef O_TMPFILE
  const int fd = ::open(folder.c_str(), O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
  if (fd >= 0) return fd;
#endif
  std::string name = folder + "/vin-inspect-stream-XXXXXX";
  const int made = ::mkstemp(name.data());
  if (made < 0)
    throw Error(path + ": cannot hold a copy of the stream in " + folder + ": " +
                std::strerror(errno));
  ::unlink(name.c_str());
  ::fcntl(made, F_SETFD, FD_CLOEXEC);
  return made;
}

// read(2) that retries on EINTR; -1 on failure
ssize_t read_some(int fd, char* out, std::size_t n) {
  for (;;) {
    const ssize_t got = ::read(fd, out, n);
    if (got >= 0 || errno != EINTR) return got;
  }
}

bool write_all(int fd, const char* data, std::size_t n) {
  while (n > 0) {
    const ssize_t put = ::write(fd, data, n);
    if (put < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    data += put;
    n -= static_cast<std::size_t>(put);
  }
  return true;
}

// Whether the first bytes of a stream can begin a text file (YAML, JSON records): UTF-8 (a
// character cut at the end of the head aside) without control bytes other than tab, newline and
// carriage return, after an optional byte-order mark. Random bytes fail within a few bytes.
bool looks_like_text(std::string_view head) {
  if (head.substr(0, 3) == "\xEF\xBB\xBF") head.remove_prefix(3);
  for (const char c : head) {
    const auto byte = static_cast<unsigned char>(c);
    if ((byte < 0x20 && c != '\t' && c != '\n' && c != '\r') || byte == 0x7f) return false;
  }
  const std::size_t bad = first_invalid_utf8(head);
  // a multi-byte character the head cuts off is not an error: at most 3 bytes from the end
  return bad == std::string_view::npos ||
         (head.size() == InputFile::kHeadBytes && head.size() - bad <= 3 &&
          first_invalid_utf8(head.substr(0, bad)) == std::string_view::npos &&
          static_cast<unsigned char>(head[bad]) >= 0xC2);
}

// The stream in `in`, copied whole into an anonymous temporary file (its descriptor and size).
// The first bytes decide how long it may be: a binary format as long as an archive may be, text
// as long as the largest text a reader takes, anything else is refused at once (a stream of
// zeros or random bytes is not read to its end).
std::pair<int, std::uint64_t> copy_stream(int in, const std::string& path,
                                          InputFile::HeadTest binary) {
  constexpr std::size_t kChunk = std::size_t{1} << 20;
  std::vector<char> buffer(kChunk);
  std::size_t held = 0;
  while (held < InputFile::kHeadBytes) {  // the head, however the writer splits its writes
    const ssize_t got = read_some(in, buffer.data() + held, InputFile::kHeadBytes - held);
    if (got < 0) throw Error(path + ": cannot read: " + std::strerror(errno));
    if (got == 0) break;
    held += static_cast<std::size_t>(got);
  }
  const std::string_view head(buffer.data(), held);
  std::uint64_t limit = InputFile::kMaxBinaryStreamBytes;
  if (!binary || !binary(head)) {
    if (!looks_like_text(head))
      throw Error(path +
                  ": a stream that starts as none of the files this tool reads (a zip, a "
                  "pickle, an .npy array, a safetensors file or UTF-8 text); refused after its first " +
                  std::to_string(held) + " bytes");
    limit = InputFile::kMaxTextStreamBytes;
  }
  Descriptor copy{anonymous_temporary_file(path)};
  std::uint64_t total = 0;
  for (;;) {
    if (held > 0) {
      total += held;
      if (total > limit)
        throw Error(path + ": a stream longer than " + std::to_string(limit >> 30) +
                    " GiB, more than any file of its kind this tool reads; save it to a file");
      if (!write_all(copy.fd, buffer.data(), held))
        throw Error(path + ": cannot hold a copy of the stream in " + temporary_folder() + ": " +
                    std::strerror(errno));
    }
    const ssize_t got = read_some(in, buffer.data(), kChunk);
    if (got < 0) throw Error(path + ": cannot read: " + std::strerror(errno));
    if (got == 0) break;
    held = static_cast<std::size_t>(got);
  }
  return {copy.release(), total};
}

}  // namespace

InputFile::InputFile(std::string path, int fd, std::uint64_t size, bool copied)
    : path_(std::move(path)), fd_(fd), size_(size), copied_(copied) {}

InputFile::~InputFile() {
  if (fd_ >= 0) ::close(fd_);
}

std::shared_ptr<const InputFile> InputFile::from_bytes(const std::string& label,
                                                       std::string_view bytes) {
  // written as they are, without from_pieces' 1 MiB buffer (which, zeroed for every small
  // member or fuzz input, cost more than the rest of a read)
  Descriptor copy{anonymous_temporary_file(label)};
  if (!write_all(copy.fd, bytes.data(), bytes.size()))
    throw Error(label + ": cannot hold a copy in " + temporary_folder() + ": " +
                std::strerror(errno));
  std::shared_ptr<InputFile> file(new InputFile(label, copy.release(), bytes.size(), true));
  file->head_.assign(bytes.substr(0, kHeadBytes));
  return file;
}

std::shared_ptr<const InputFile> InputFile::from_pieces(
    const std::string& label, const std::function<std::size_t(char* out, std::size_t n)>& next) {
  Descriptor copy{anonymous_temporary_file(label)};
  std::vector<char> buffer(std::size_t{1} << 20);
  std::uint64_t total = 0;
  for (;;) {
    const std::size_t got = next(buffer.data(), buffer.size());
    if (got == 0) break;
    total += got;
    if (!write_all(copy.fd, buffer.data(), got))
      throw Error(label + ": cannot hold a copy in " + temporary_folder() + ": " +
                  std::strerror(errno));
  }
  std::shared_ptr<InputFile> file(new InputFile(label, copy.release(), total, true));
  file->head_.resize(kHeadBytes);
  file->head_.resize(file->read_at(0, file->head_.data(), kHeadBytes));
  return file;
}

std::shared_ptr<const InputFile> InputFile::open(const std::string& path, std::string_view what,
                                                 HeadTest binary) {
  Descriptor fd;
  do {
    fd.fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  } while (fd.fd < 0 && errno == EINTR);
  if (fd.fd < 0) {
    if (errno == ENOENT) throw Error(path + ": no such file");
    throw Error(path + ": cannot open: " + std::strerror(errno));
  }
  struct stat st {};
  if (::fstat(fd.fd, &st) != 0) throw Error(path + ": cannot read: " + std::strerror(errno));
  if (S_ISDIR(st.st_mode))
    throw Error(path + ": is a directory" + (what.empty() ? "" : ", not " + std::string(what)));
  std::shared_ptr<InputFile> file;
  if (S_ISREG(st.st_mode)) {
    file.reset(new InputFile(path, fd.release(), static_cast<std::uint64_t>(st.st_size), false));
  } else {
    const auto [copy, size] = copy_stream(fd.fd, path, binary);
    file.reset(new InputFile(path, copy, size, true));
  }
  file->head_.resize(kHeadBytes);
  file->head_.resize(file->read_at(0, file->head_.data(), kHeadBytes));
  return file;
}

std::size_t InputFile::read_at(std::uint64_t offset, void* out, std::size_t n) const {
  std::size_t done = 0;
  while (done < n) {
    const ssize_t got =
        ::pread(fd_, static_cast<char*>(out) + done, n - done, static_cast<off_t>(offset + done));
    if (got < 0) {
      if (errno == EINTR) continue;
      throw Error(path_ + ": cannot read: " + std::strerror(errno));
    }
    if (got == 0) break;
    done += static_cast<std::size_t>(got);
  }
  return done;
}

std::string InputFile::read_all(std::uint64_t max_bytes, std::string_view what) const {
  if (size_ > max_bytes)
    throw Error(path_ + ": " + std::to_string(size_) + " bytes is too large for " +
                std::string(what));
  std::string bytes(static_cast<std::size_t>(size_), '\0');
  bytes.resize(read_at(0, bytes.data(), bytes.size()));
  return bytes;
}

InputFileBuffer::int_type InputFileBuffer::underflow() {
  if (gptr() < egptr()) return traits_type::to_int_type(*gptr());
  buffer_start_ += static_cast<std::uint64_t>(egptr() - eback());
  const std::size_t got = file_.read_at(buffer_start_, buffer_.data(), buffer_.size());
  setg(buffer_.data(), buffer_.data(), buffer_.data() + got);
  return got == 0 ? traits_type::eof() : traits_type::to_int_type(buffer_[0]);
}

InputFileBuffer::pos_type InputFileBuffer::seekoff(off_type off, std::ios_base::seekdir dir,
                                                   std::ios_base::openmode which) {
  const auto here = static_cast<off_type>(buffer_start_) + (gptr() - eback());
  const off_type base = dir == std::ios_base::beg   ? 0
                        : dir == std::ios_base::cur ? here
                                                    : static_cast<off_type>(file_.size());
  return seekpos(pos_type(base + off), which);
}

InputFileBuffer::pos_type InputFileBuffer::seekpos(pos_type pos, std::ios_base::openmode which) {
  const auto at = static_cast<off_type>(pos);
  if (!(which & std::ios_base::in) || at < 0 || static_cast<std::uint64_t>(at) > file_.size())
    return pos_type(off_type(-1));
  buffer_start_ = static_cast<std::uint64_t>(at);
  setg(buffer_.data(), buffer_.data(), buffer_.data());  // empty: the next read fills it
  return pos;
}

std::string_view WindowedReader::at(std::uint64_t offset, std::size_t n) {
  n = std::min(n, kWindowBytes);
  const bool held = offset >= window_start_ && offset - window_start_ <= window_bytes_ &&
                    n <= window_bytes_ - (offset - window_start_);
  if (!held) {
    window_start_ = offset;
    window_bytes_ =
        offset >= file_.size() ? 0 : file_.read_at(offset, window_.data(), kWindowBytes);
  }
  const auto from = static_cast<std::size_t>(offset - window_start_);
  return {window_.data() + from, std::min(n, window_bytes_ - from)};
}

}  // namespace vin::diagnostics
