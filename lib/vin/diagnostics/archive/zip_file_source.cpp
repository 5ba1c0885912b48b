#include "vin/diagnostics/archive/zip_file_source.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <vector>

namespace vin::diagnostics {
namespace {

// The file, read with pread through one window of kWindowBytes that a read outside it moves.
struct FileWindow {
  static constexpr std::size_t kWindowBytes = 64 * 1024;

  int fd = -1;
  zip_uint64_t size = 0;
  time_t mtime = 0;
  zip_uint64_t offset = 0;  // where the next read starts
  std::vector<char> window = std::vector<char>(kWindowBytes);
  zip_uint64_t window_start = 0;
  std::size_t window_bytes = 0;  // bytes of the file held, from window_start
  zip_error_t error;

  FileWindow() { zip_error_init(&error); }
  ~FileWindow() {
    if (fd >= 0) ::close(fd);
    zip_error_fini(&error);
  }

  // pread that retries on EINTR; -1 (error set) on failure, 0 at the end of the file
  zip_int64_t read_at(zip_uint64_t at, char* out, std::size_t n) {
    for (;;) {
      const ssize_t got = ::pread(fd, out, n, static_cast<off_t>(at));
      if (got >= 0) return got;
      if (errno != EINTR) {
        zip_error_set(&error, ZIP_ER_READ, errno);
        return -1;
      }
    }
  }

  zip_int64_t read(char* out, zip_uint64_t n) {
    zip_uint64_t done = 0;
    while (done < n && offset < size) {
      if (offset >= window_start && offset < window_start + window_bytes) {
        const auto from = static_cast<std::size_t>(offset - window_start);
        const auto count =
            static_cast<std::size_t>(std::min<zip_uint64_t>(n - done, window_bytes - from));
        std::memcpy(out + done, window.data() + from, count);
        done += count;
        offset += count;
        continue;
      }
      zip_int64_t got = 0;
      if (n - done >= kWindowBytes) {  // a large read (a member's data) bypasses the window
        got = read_at(offset, out + done, static_cast<std::size_t>(n - done));
        if (got > 0) {
          done += static_cast<zip_uint64_t>(got);
          offset += static_cast<zip_uint64_t>(got);
        }
      } else {
        got = read_at(offset, window.data(), kWindowBytes);
        if (got > 0) {
          window_start = offset;
          window_bytes = static_cast<std::size_t>(got);
        }
      }
      if (got < 0) return -1;
      if (got == 0) break;  // the file is shorter than it was: libzip reports the short read
    }
    return static_cast<zip_int64_t>(done);
  }
};

zip_int64_t file_window_callback(void* state, void* data, zip_uint64_t len, zip_source_cmd_t cmd) {
  auto* file = static_cast<FileWindow*>(state);
  switch (cmd) {
    case ZIP_SOURCE_OPEN:
      file->offset = 0;
      return 0;
    case ZIP_SOURCE_READ:
      return file->read(static_cast<char*>(data), len);
    case ZIP_SOURCE_CLOSE:
      return 0;
    case ZIP_SOURCE_STAT: {
      if (len < sizeof(zip_stat_t)) {
        zip_error_set(&file->error, ZIP_ER_INVAL, 0);
        return -1;
      }
      auto* st = static_cast<zip_stat_t*>(data);
      zip_stat_init(st);
      st->size = file->size;
      st->mtime = file->mtime;
      st->valid |= ZIP_STAT_SIZE | ZIP_STAT_MTIME;
      return sizeof(zip_stat_t);
    }
    case ZIP_SOURCE_ERROR:
      return zip_error_to_data(&file->error, data, len);
    case ZIP_SOURCE_FREE:
      delete file;
      return 0;
    case ZIP_SOURCE_SEEK: {
      const zip_int64_t to =
          zip_source_seek_compute_offset(file->offset, file->size, data, len, &file->error);
      if (to < 0) return -1;
      file->offset = static_cast<zip_uint64_t>(to);
      return 0;
    }
    case ZIP_SOURCE_TELL:
      return static_cast<zip_int64_t>(file->offset);
    case ZIP_SOURCE_SUPPORTS:
      return zip_source_make_command_bitmap(
          ZIP_SOURCE_OPEN, ZIP_SOURCE_READ, ZIP_SOURCE_CLOSE, ZIP_SOURCE_STAT, ZIP_SOURCE_ERROR,
          ZIP_SOURCE_FREE, ZIP_SOURCE_SEEK, ZIP_SOURCE_TELL, ZIP_SOURCE_SUPPORTS, -1);
    default:
      zip_error_set(&file->error, ZIP_ER_OPNOTSUPP, 0);
      return -1;
  }
}

}  // namespace

zip_t* open_zip_file(const std::string& path, int flags, int* error_code) {
  auto* file = new FileWindow;
  file->fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  struct stat st {};
  if (file->fd < 0 || ::fstat(file->fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    *error_code = ZIP_ER_OPEN;
    delete file;
    return nullptr;
  }
  file->size = static_cast<zip_uint64_t>(st.st_size);
  file->mtime = st.st_mtime;
  zip_error_t error;
  zip_error_init(&error);
  zip_source_t* source = zip_source_function_create(file_window_callback, file, &error);
  if (source == nullptr) {
    *error_code = zip_error_code_zip(&error);
    zip_error_fini(&error);
    delete file;
    return nullptr;
  }
  // from here the source owns `file` (ZIP_SOURCE_FREE), and the archive owns the source
  zip_t* zip = zip_open_from_source(source, flags, &error);
  if (zip == nullptr) {
    *error_code = zip_error_code_zip(&error);
    zip_source_free(source);
  }
  zip_error_fini(&error);
  return zip;
}

}  // namespace vin::diagnostics
