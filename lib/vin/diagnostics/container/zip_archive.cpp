#include "vin/diagnostics/container/zip_archive.h"

#include <cstdio>

#include <zip.h>
#include <zlib.h>

#include <algorithm>
#include <cstring>
#include <new>

#include "vin/diagnostics/container/zip_directory.h"
#include "vin/diagnostics/records/error.h"
#include "vin/diagnostics/text/printable.h"

namespace vin::diagnostics {
namespace {

// The file as libzip's source, read through one window (WindowedReader) instead of libzip's
// stdio source, which seeks the FILE (an lseek system call) for every member it opens.
struct FileWindow {
  InputFilePtr file;
  WindowedReader reader;
  zip_uint64_t offset = 0;  // where the next read starts
  zip_error_t error;

  explicit FileWindow(InputFilePtr f) : file(std::move(f)), reader(*file) {
    zip_error_init(&error);
  }
  ~FileWindow() { zip_error_fini(&error); }

  zip_int64_t read(char* out, zip_uint64_t n) {
    try {
      std::size_t got = 0;
      if (n >= WindowedReader::kWindowBytes) {  // a large read (a member's data) bypasses it
        got = file->read_at(offset, out, static_cast<std::size_t>(n));
      } else {
        const std::string_view bytes = reader.at(offset, static_cast<std::size_t>(n));
        std::memcpy(out, bytes.data(), bytes.size());
        got = bytes.size();
      }
      offset += got;  // fewer than n at the end of the file: libzip reports the short read
      return static_cast<zip_int64_t>(got);
    } catch (const Error&) {
      zip_error_set(&error, ZIP_ER_READ, errno);
      return -1;
    }
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

// libzip's error code for a failure, or std::bad_alloc where the failure was an allocation: its
// own (ZIP_ER_MEMORY) or zlib's, which libzip passes on as ZIP_ER_ZLIB with zlib's Z_MEM_ERROR
// (inflateInit2 under a small address space; libzip 1.12 reports it so). Memory is not damage:
// naming_out_of_memory names the stage.
int failure_code(zip_error_t* error) {
  const int code = zip_error_code_zip(error);
  if (code == ZIP_ER_MEMORY) throw std::bad_alloc();
  if ((code == ZIP_ER_ZLIB || code == ZIP_ER_COMPRESSED_DATA) &&
      zip_error_code_system(error) == Z_MEM_ERROR)
    throw std::bad_alloc();
  return code;
}

// What a libzip error code means, in the project's words (libzip's own differ between versions)
std::string zip_problem(int code) {
  switch (code) {
    case ZIP_ER_CRC:
      return "its data does not match its checksum";
    case ZIP_ER_ZLIB:
    case ZIP_ER_COMPRESSED_DATA:
      return "its compressed data is damaged";
#ifdef ZIP_ER_DATA_LENGTH
    case ZIP_ER_DATA_LENGTH:
      return "its data is not as long as its directory says";
#endif
#ifdef ZIP_ER_TRUNCATED_ZIP
    case ZIP_ER_TRUNCATED_ZIP:
#endif
    case ZIP_ER_NOZIP:
      return "its directory at the end is missing";
    case ZIP_ER_EOF:
      return "the file ends before the data its directory describes";
    case ZIP_ER_READ:
    case ZIP_ER_SEEK:
    case ZIP_ER_TELL:
      return "the file cannot be read";
    case ZIP_ER_INCONS:
      return "its directory is inconsistent";
    case ZIP_ER_MULTIDISK:
      return "a multi-disk archive, which no PyTorch writer makes";
    case ZIP_ER_COMPNOTSUPP:
    case ZIP_ER_ENCRNOTSUPP:
    case ZIP_ER_NOPASSWD:
      return "it is compressed or encrypted in a way torch.save, torch.jit.save and numpy never "
             "use";
    default:
      return "the zip reader's error " + std::to_string(code);
  }
}

// zip_open_from_source over the file, read-only; its members' consistency is checked by
// check_zip_members, not by libzip's ZIP_CHECKCONS (zip_directory.h says why). Throws Error
// naming the file.
zip_t* open_zip(const InputFilePtr& file) {
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
  zip_t* zip = zip_open_from_source(source, ZIP_RDONLY, &error);
  if (zip != nullptr) {
    zip_error_fini(&error);
    return zip;
  }
  zip_source_free(source);
  int code = ZIP_ER_OK;
  try {
    code = failure_code(&error);
  } catch (const std::bad_alloc&) {
    zip_error_fini(&error);
    throw;
  }
  zip_error_fini(&error);
  throw Error(file->path() + ": truncated or damaged zip archive (" + zip_problem(code) + ")");
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
  const ZipDirectory directory = read_zip_directory(*file_);
  const std::vector<std::uint64_t> data_begins = check_zip_members(*file_, directory);
  zip_ = open_zip(file_);
  try {
    // libzip must read the directory as read_zip_directory did: where two readers of one zip
    // disagree, each member could be checked in one reading and read in the other
    const auto disagrees = [&](const std::string& what) {
      throw Error(path() + ": truncated or damaged zip archive (its directory reads two ways: " +
                  what + ")");
    };
    const zip_int64_t n = zip_get_num_entries(zip_, 0);
    if (n < 0 || static_cast<std::uint64_t>(n) != directory.entries.size())
      disagrees("the number of members");
    entries_.reserve(directory.entries.size());
    for (std::size_t i = 0; i < directory.entries.size(); ++i) {
      const ZipDirectoryEntry& recorded = directory.entries[i];
      zip_stat_t st;
      const char* raw_name = zip_get_name(zip_, i, ZIP_FL_ENC_RAW);
      if (zip_stat_index(zip_, i, 0, &st) != 0 || raw_name == nullptr)
        throw Error(path() + ": damaged zip archive (an unreadable directory entry)");
      const zip_uint64_t stated =
          ZIP_STAT_NAME | ZIP_STAT_SIZE | ZIP_STAT_COMP_SIZE | ZIP_STAT_COMP_METHOD | ZIP_STAT_CRC;
      if ((st.valid & stated) != stated || raw_name != recorded.name || st.size != recorded.size ||
          st.comp_size != recorded.compressed_size || st.crc != recorded.crc ||
          st.comp_method != recorded.method)
        disagrees("member " + std::to_string(i) + ", " + printable(recorded.name, 200));
      if (const auto problem = zip_member_problem(st.comp_method, st.size, st.comp_size))
        throw Error(path() + ": the member " + printable(st.name, 200) +
                    " cannot be read safely: " + *problem);
      Entry entry{st.name, st.size, st.crc, std::nullopt};
      if (st.comp_method == ZIP_CM_STORE) entry.stored_at = data_begins[i];
      entries_.push_back(std::move(entry));
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
  // why, where libzip says (an allocation that failed inside it is memory, not damage)
  int code = ZIP_ER_OK;
  try {
    code = whole ? ZIP_ER_OK
           : member ? failure_code(zip_file_get_error(member))
                    : failure_code(zip_get_error(zip_));
  } catch (const std::bad_alloc&) {
    if (member) zip_fclose(member);
    throw;
  }
  if (member) zip_fclose(member);
  if (!whole)
    throw Error(path() + ": cannot read the record " + std::string(label) + " (damaged archive: " +
                (code == ZIP_ER_OK ? "its data does not match its checksum" : zip_problem(code)) +
                ")");
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
  if (member == nullptr) {
    const int code = failure_code(zip_get_error(zip_));
    throw Error(label + ": cannot read (" + zip_problem(code) + ")");
  }
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
  const int code = failure_code(zip_file_get_error(static_cast<zip_file_t*>(file_)));
  throw Error(label_ + ": damaged member (" + zip_problem(code) + ")");
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
