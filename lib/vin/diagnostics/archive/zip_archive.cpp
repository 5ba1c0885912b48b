#include "vin/diagnostics/archive/zip_archive.h"

#include <zip.h>

#include <algorithm>
#include <cstring>
#include <new>

#include "vin/diagnostics/records/error.h"
#include "vin/diagnostics/text/printable.h"

namespace vin::diagnostics {
namespace {

// The file, read with pread through one window of kWindowBytes that a read outside it moves,
// instead of libzip's stdio source, which seeks the FILE (an lseek system call) for every
// member: ZIP_CHECKCONS reads each member's local header, so an archive of 10,000 members paid
// 10,000 system calls to be opened.
struct FileWindow {
  static constexpr std::size_t kWindowBytes = 64 * 1024;

  InputFilePtr file;
  zip_uint64_t offset = 0;  // where the next read starts
  std::vector<char> window = std::vector<char>(kWindowBytes);
  zip_uint64_t window_start = 0;
  std::size_t window_bytes = 0;  // bytes of the file held, from window_start
  zip_error_t error;

  explicit FileWindow(InputFilePtr f) : file(std::move(f)) { zip_error_init(&error); }
  ~FileWindow() { zip_error_fini(&error); }

  // -1 (error set) on failure, 0 at the end of the file
  zip_int64_t read_at(zip_uint64_t at, char* out, std::size_t n) {
    try {
      return static_cast<zip_int64_t>(file->read_at(at, out, n));
    } catch (const Error&) {
      zip_error_set(&error, ZIP_ER_READ, errno);
      return -1;
    }
  }

  zip_int64_t read(char* out, zip_uint64_t n) {
    zip_uint64_t done = 0;
    while (done < n && offset < file->size()) {
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
  auto* window = static_cast<FileWindow*>(state);
  switch (cmd) {
    case ZIP_SOURCE_OPEN:
      window->offset = 0;
      return 0;
    case ZIP_SOURCE_READ:
      return window->read(static_cast<char*>(data), len);
    case ZIP_SOURCE_CLOSE:
      return 0;
    case ZIP_SOURCE_STAT: {
      if (len < sizeof(zip_stat_t)) {
        zip_error_set(&window->error, ZIP_ER_INVAL, 0);
        return -1;
      }
      auto* st = static_cast<zip_stat_t*>(data);
      zip_stat_init(st);
      st->size = window->file->size();
      st->valid |= ZIP_STAT_SIZE;
      return sizeof(zip_stat_t);
    }
    case ZIP_SOURCE_ERROR:
      return zip_error_to_data(&window->error, data, len);
    case ZIP_SOURCE_FREE:
      delete window;
      return 0;
    case ZIP_SOURCE_SEEK: {
      const zip_int64_t to = zip_source_seek_compute_offset(window->offset, window->file->size(),
                                                            data, len, &window->error);
      if (to < 0) return -1;
      window->offset = static_cast<zip_uint64_t>(to);
      return 0;
    }
    case ZIP_SOURCE_TELL:
      return static_cast<zip_int64_t>(window->offset);
    case ZIP_SOURCE_SUPPORTS:
      return zip_source_make_command_bitmap(
          ZIP_SOURCE_OPEN, ZIP_SOURCE_READ, ZIP_SOURCE_CLOSE, ZIP_SOURCE_STAT, ZIP_SOURCE_ERROR,
          ZIP_SOURCE_FREE, ZIP_SOURCE_SEEK, ZIP_SOURCE_TELL, ZIP_SOURCE_SUPPORTS, -1);
    default:
      zip_error_set(&window->error, ZIP_ER_OPNOTSUPP, 0);
      return -1;
  }
}

// zip_open_from_source over the file; throws Error naming it (the project's words, not
// libzip's, which change between versions)
zip_t* open_zip(const InputFilePtr& file) {
  const std::string& path = file->path();
  zip_error_t error;
  zip_error_init(&error);
  auto* window = new FileWindow(file);
  zip_source_t* source = zip_source_function_create(file_window_callback, window, &error);
  if (source == nullptr) {
    delete window;
    zip_error_fini(&error);
    throw std::bad_alloc();
  }
  // from here the source owns `window` (ZIP_SOURCE_FREE), and the archive owns the source
  zip_t* zip = zip_open_from_source(source, ZIP_RDONLY | ZIP_CHECKCONS, &error);
  if (zip != nullptr) {
    zip_error_fini(&error);
    return zip;
  }
  zip_source_free(source);
  const int code = zip_error_code_zip(&error);
  const std::string reason = zip_error_strerror(&error);
  zip_error_fini(&error);
  if (code == ZIP_ER_MEMORY) throw std::bad_alloc();  // naming_out_of_memory names the stage
  // a zip whose directory at the end is missing was cut short (or is not a zip after all);
  // libzip 1.7 says ZIP_ER_NOZIP, later ones ZIP_ER_TRUNCATED_ZIP
  if (code == ZIP_ER_NOZIP
#ifdef ZIP_ER_TRUNCATED_ZIP
      || code == ZIP_ER_TRUNCATED_ZIP
#endif
  )
    throw Error(path + ": truncated or damaged zip archive (its directory at the end is missing)");
  throw Error(path + ": truncated or damaged zip archive (" + reason + ")");
}

// Deflate cannot expand data by more than 1032:1; a member that claims more is a bomb or damage.
constexpr std::uint64_t kMaxDeflateRatio = 1032;

}  // namespace

std::optional<std::string> zip_member_problem(int method, std::uint64_t size,
                                              std::uint64_t compressed_size) {
  if (method == ZIP_CM_STORE) {
    if (size != compressed_size)
      return "it is stored uncompressed, but declares " + std::to_string(size) + " bytes for " +
             std::to_string(compressed_size);
    return std::nullopt;
  }
  if (method == ZIP_CM_DEFLATE) {
    if (size / kMaxDeflateRatio > compressed_size)
      return "it declares " + std::to_string(size) + " bytes from " +
             std::to_string(compressed_size) + " deflated ones, more than deflate can expand";
    return std::nullopt;
  }
  return "it is compressed with method " + std::to_string(method) +
         ", which torch.save, torch.jit.save and numpy never use (stored and deflate only)";
}

ZipArchive::ZipArchive(InputFilePtr file) : file_(std::move(file)) {
  zip_ = open_zip(file_);
  try {
    const zip_int64_t n = zip_get_num_entries(zip_, 0);
    entries_.reserve(static_cast<std::size_t>(std::max<zip_int64_t>(n, 0)));
    for (zip_int64_t i = 0; i < n; ++i) {
      zip_stat_t st;
      if (zip_stat_index(zip_, static_cast<zip_uint64_t>(i), 0, &st) != 0)
        throw Error(path() + ": damaged zip archive (an unreadable directory entry)");
      const char* name = (st.valid & ZIP_STAT_NAME) ? st.name : nullptr;
      const bool recorded = (st.valid & ZIP_STAT_COMP_METHOD) && (st.valid & ZIP_STAT_SIZE) &&
                            (st.valid & ZIP_STAT_COMP_SIZE);
      const auto problem = recorded
                               ? zip_member_problem(st.comp_method, st.size, st.comp_size)
                               : std::optional<std::string>("its size or compression is not recorded");
      if (problem)
        throw Error(path() + ": the member " + printable(name ? name : "?", 200) +
                    " cannot be read safely: " + *problem);
      entries_.push_back(
          Entry{name ? name : "", st.size, (st.valid & ZIP_STAT_CRC) ? st.crc : 0u});
    }
    index_.reserve(entries_.size());
    for (std::size_t i = 0; i < entries_.size(); ++i) index_.emplace(entries_[i].name, i);
  } catch (...) {
    zip_discard(zip_);
    throw;
  }
}

ZipArchive::~ZipArchive() { zip_discard(zip_); }  // read-only: nothing to write back

std::optional<std::size_t> ZipArchive::find(std::string_view name) const {
  const auto it = index_.find(name);
  if (it == index_.end()) return std::nullopt;
  return it->second;
}

bool ZipArchive::has_entry_under(std::string_view folder) const {
  return std::any_of(entries_.begin(), entries_.end(), [&](const Entry& e) {
    return std::string_view(e.name).substr(0, folder.size()) == folder;
  });
}

std::string ZipArchive::first_folder() const {
  if (entries_.empty()) return "";
  const std::string& first = entries_.front().name;
  const auto slash = first.find('/');
  return slash == std::string::npos ? "" : first.substr(0, slash + 1);
}

std::string ZipArchive::read(std::size_t index, std::uint64_t max_bytes,
                             std::string_view label) const {
  const Entry& entry = entries_.at(index);
  if (entry.size > max_bytes)
    throw Error(path() + ": the record " + std::string(label) + " is larger than " +
                std::to_string(max_bytes) + " bytes");
  // libzip compares the CRC only when a read reaches the end, which the one-byte read past the
  // record does (LibTorch's zip reader checks no CRC at all)
  zip_file_t* member = zip_fopen_index(zip_, static_cast<zip_uint64_t>(index), 0);
  std::string bytes(static_cast<std::size_t>(entry.size), '\0');
  char past_end = 0;
  const bool whole =
      member != nullptr &&
      zip_fread(member, bytes.data(), entry.size) == static_cast<zip_int64_t>(entry.size) &&
      zip_fread(member, &past_end, 1) == 0;
  if (member) zip_fclose(member);
  if (!whole)
    throw Error(path() + ": cannot read the record " + std::string(label) +
                " (damaged archive: its data does not match its checksum)");
  return bytes;
}

std::optional<std::string> ZipArchive::read(const std::string& name,
                                            std::uint64_t max_bytes) const {
  const auto index = find(name);
  if (!index) return std::nullopt;
  return read(*index, max_bytes, printable(name));
}

ZipArchive::Member ZipArchive::open(std::size_t index, std::string label) const {
  zip_file_t* member = zip_fopen_index(zip_, static_cast<zip_uint64_t>(index), 0);
  if (member == nullptr)
    throw Error(label + ": cannot read (" + zip_strerror(zip_) + ")");
  return Member(member, std::move(label));
}

ZipArchive::Member::Member(Member&& other) noexcept
    : file_(other.file_), label_(std::move(other.label_)) {
  other.file_ = nullptr;
}

ZipArchive::Member::~Member() {
  if (file_) zip_fclose(static_cast<zip_file_t*>(file_));
}

void ZipArchive::Member::fail() {
  throw Error(label_ + ": damaged member (" +
              zip_error_strerror(zip_file_get_error(static_cast<zip_file_t*>(file_))) + ")");
}

std::size_t ZipArchive::Member::read(void* out, std::size_t n) {
  std::size_t done = 0;
  while (done < n) {
    const zip_int64_t got =
        zip_fread(static_cast<zip_file_t*>(file_), static_cast<char*>(out) + done, n - done);
    if (got < 0) fail();
    if (got == 0) break;
    done += static_cast<std::size_t>(got);
  }
  return done;
}

bool ZipArchive::Member::at_end() {
  unsigned char probe;
  const zip_int64_t got = zip_fread(static_cast<zip_file_t*>(file_), &probe, 1);
  if (got < 0) fail();
  return got == 0;
}

}  // namespace vin::diagnostics
