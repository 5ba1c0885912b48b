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

[[noreturn]] void fail(const std::string& what, const std::string& action, int error) {
  if (error == EPIPE) throw OutputClosed();
  throw Error(what + ": " + action + ": " + std::strerror(error));
}

// The mode a new file gets from open(2) with 0666: what the umask allows.
mode_t default_file_mode() {
  const mode_t mask = ::umask(0);
  ::umask(mask);
  return 0666 & ~mask;
}

void write_in_place(const std::string& target, std::string_view text) {
  const int fd = ::open(target.c_str(), O_WRONLY | O_TRUNC | O_CLOEXEC);
  if (fd < 0) fail(target, "cannot write", errno);
  const int error = write_all(fd, text);
  const int close_error = ::close(fd) == 0 ? 0 : errno;
  if (error) fail(target, "write failed", error);
  if (close_error) fail(target, "write failed", close_error);
}

void write_by_rename(const std::string& target, std::string_view text, mode_t mode) {
  const fs::path path(target);
  const fs::path folder = path.has_parent_path() ? path.parent_path() : fs::path(".");
  std::string temp = (folder / ("." + path.filename().string() + ".vin-inspect-XXXXXX")).string();
  std::vector<char> name(temp.begin(), temp.end());
  name.push_back('\0');
  const int fd = ::mkostemp(name.data(), O_CLOEXEC);
  if (fd < 0) fail(target, "cannot write", errno);
  temp = name.data();
  int error = ::fchmod(fd, mode) == 0 ? 0 : errno;
  if (!error) error = write_all(fd, text);
  if (::close(fd) != 0 && !error) error = errno;
  if (!error && ::rename(temp.c_str(), target.c_str()) != 0) error = errno;
  if (error) {
    ::unlink(temp.c_str());
    fail(target, "write failed", error);
  }
}

}  // namespace

void write_output(const std::string& target, std::string_view text) {
  if (target.empty() || target == "-") {
    if (const int error = write_all(STDOUT_FILENO, text))
      fail("standard output", "write failed", error);
    return;
  }
  struct stat st;
  if (::stat(target.c_str(), &st) == 0) {
    if (S_ISDIR(st.st_mode)) throw Error(target + ": cannot write: Is a directory");
    if (!S_ISREG(st.st_mode)) return write_in_place(target, text);
    // through a symbolic link: replace the file it points to, not the link
    std::error_code ec;
    const fs::path real = fs::canonical(target, ec);
    return write_by_rename(ec ? target : real.string(), text, st.st_mode & 07777);
  }
  write_by_rename(target, text, default_file_mode());
}

}  // namespace vin::diagnostics
