#include "vin/diagnostics/output/output_sink.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <vector>

namespace vin::diagnostics {
namespace {

namespace fs = std::filesystem;

// Writes all of `text` to `fd`; 0, or the errno of the write that failed.
int write_all(int fd, std::string_view text) {
  while (!text.empty()) {
    const ssize_t n = ::write(fd, text.data(), text.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return errno;
    }
    text.remove_prefix(static_cast<std::size_t>(n));
  }
  return 0;
}

// EPIPE too (the reader of stdout went away, SIGPIPE ignored): the output is incomplete, and a
// script that ignores SIGPIPE is told which write failed, as coreutils tell it
[[noreturn]] void fail(const std::string& what, const std::string& action, int error) {
  throw Error(what + ": " + action + ": " + std::strerror(error));
}

// The mode a new file gets from open(2) with 0666: what the umask allows.
mode_t default_file_mode() {
  const mode_t mask = ::umask(0);
  ::umask(mask);
  return 0666 & ~mask;
}

}  // namespace

StagingFile stage_beside(const std::string& target, const std::string& shown) {
  StagingFile staged;
  struct stat st;
  mode_t mode = default_file_mode();
  staged.final_path = target;
  if (::stat(target.c_str(), &st) == 0) {
    if (S_ISDIR(st.st_mode)) throw Error(shown + ": cannot write: Is a directory");
    if (!S_ISREG(st.st_mode)) return staged;  // a device or a FIFO: written in place
    // through a symbolic link: replace the file it points to, not the link
    std::error_code ec;
    const fs::path real = fs::canonical(target, ec);
    if (!ec) staged.final_path = real.string();
    mode = st.st_mode & 07777;
  }
  const fs::path path(staged.final_path);
  const fs::path folder = path.has_parent_path() ? path.parent_path() : fs::path(".");
  std::string temp = (folder / ("." + path.filename().string() + ".vin-inspect-XXXXXX")).string();
  std::vector<char> name(temp.begin(), temp.end());
  name.push_back('\0');
  const int fd = ::mkostemp(name.data(), O_CLOEXEC);
  if (fd < 0) fail(shown, "cannot write", errno);
  if (::fchmod(fd, mode) != 0) {
    const int error = errno;
    ::close(fd);
    ::unlink(name.data());
    fail(shown, "cannot write", error);
  }
  staged.fd = fd;
  staged.temp = name.data();
  return staged;
}

OutputFile::OutputFile(const std::string& target) {
  if (target.empty() || target == "-") {
    fd_ = STDOUT_FILENO;
    where_ = "standard output";
    return;
  }
  where_ = target;
  StagingFile staged = stage_beside(target, where_);
  if (staged.temp.empty()) {  // a device or a FIFO
    open_in_place(target);
    return;
  }
  fd_ = staged.fd;
  owns_fd_ = true;
  temp_ = std::move(staged.temp);
  final_ = std::move(staged.final_path);
}

OutputFile::OutputFile(const PlannedOutput& planned) {
  if (planned.path.empty() || planned.path == "-") {
    fd_ = STDOUT_FILENO;
    where_ = "standard output";
    return;
  }
  where_ = planned.shown.empty() ? planned.path : planned.shown;
  open_in_place(planned.path);
}

void OutputFile::open_in_place(const std::string& path) {
  fd_ = ::open(path.c_str(), O_WRONLY | O_TRUNC | O_CLOEXEC);
  if (fd_ < 0) fail(where_, "cannot write", errno);
  owns_fd_ = true;
}

OutputFile::~OutputFile() { discard(); }

void OutputFile::discard() noexcept {
  if (owns_fd_) ::close(fd_);
  owns_fd_ = false;
  if (!temp_.empty()) ::unlink(temp_.c_str());
  temp_.clear();
}

void OutputFile::write(std::string_view bytes) {
  if (const int error = write_all(fd_, bytes)) {
    discard();
    fail(where_, "write failed", error);
  }
}

void OutputFile::commit() {
  if (!owns_fd_) return;  // standard output: every write was checked
  const int fd = fd_;
  owns_fd_ = false;
  int error = ::close(fd) == 0 ? 0 : errno;
  if (!error && !temp_.empty() && ::rename(temp_.c_str(), final_.c_str()) != 0) error = errno;
  if (error) {
    discard();
    fail(where_, "write failed", error);
  }
  temp_.clear();  // renamed: nothing to remove
}

bool names_standard_output(const std::string& path) {
  struct stat out {};
  struct stat named {};
  // a character device (/dev/null, a terminal) takes both outputs without harm
  return fstat(STDOUT_FILENO, &out) == 0 && !S_ISCHR(out.st_mode) &&
         stat(path.c_str(), &named) == 0 && named.st_dev == out.st_dev &&
         named.st_ino == out.st_ino;
}

void write_output(const std::string& target, std::string_view text) {
  OutputFile file(target);
  file.write(text);
  file.commit();
}

void write_output(const PlannedOutput& planned, std::string_view text) {
  OutputFile file(planned);
  file.write(text);
  file.commit();
}

}  // namespace vin::diagnostics
