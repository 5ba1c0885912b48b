#include "vin/diagnostics/archive/archive_layout.h"

#include <zip.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <new>
#include <string_view>
#include <vector>

#include "vin/diagnostics/archive/class_source.h"
#include "vin/diagnostics/archive/pickle_safety.h"
#include "vin/diagnostics/archive/zip_file_source.h"
#include "vin/diagnostics/archive/zip_handle.h"
#include "vin/diagnostics/records/error.h"
#include "vin/diagnostics/text/printable.h"

namespace vin::diagnostics {
namespace {

namespace fs = std::filesystem;

bool ends_with(std::string_view text, std::string_view suffix) {
  return text.size() >= suffix.size() && text.substr(text.size() - suffix.size()) == suffix;
}

// The first bytes, to tell "not a zip at all" from "a damaged zip".
std::string read_magic(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(path + ": cannot open: " + std::strerror(errno));
  char buf[4] = {};
  in.read(buf, sizeof buf);
  return std::string(buf, static_cast<std::size_t>(in.gcount()));
}

void check_regular_file(const std::string& path) {
  std::error_code ec;
  const auto status = fs::status(path, ec);
  if (status.type() == fs::file_type::not_found) throw Error(path + ": no such file");
  if (ec) throw Error(path + ": cannot read: " + ec.message());
  if (fs::is_directory(status)) throw Error(path + ": is a directory, not a TorchScript archive");
  if (!fs::is_regular_file(status)) throw Error(path + ": not a regular file");
}

// The whole record at `index` (`size` bytes), its CRC checked: libzip compares it only when a
// read reaches the end, which the one-byte read past the record does (LibTorch's zip reader
// checks no CRC at all). `record` names it in the error.
std::string read_member(zip_t* zip, zip_uint64_t index, zip_uint64_t size, const std::string& path,
                        const std::string& record) {
  ZipFileHandle file(zip_fopen_index(zip, index, 0));
  std::string bytes(size, '\0');
  char past_end = 0;
  if (!file || zip_fread(file.get(), bytes.data(), size) != static_cast<zip_int64_t>(size) ||
      zip_fread(file.get(), &past_end, 1) != 0)
    throw Error(path + ": cannot read the record " + printable(record) +
                " (damaged archive: its data does not match its checksum)");
  return bytes;
}

// `check_consistency`: libzip compares every local header with the directory (ZIP_CHECKCONS),
// which costs a read per member; probe_torchscript_archive does it once, later reads of the same
// archive skip it (each record read still checks that record's CRC).
ZipHandle open_zip(const std::string& path, bool check_consistency = true) {
  const std::string magic = read_magic(path);
  if (magic.empty()) throw Error(path + ": empty file, not a TorchScript archive");
  const bool looks_like_zip = magic.size() >= 2 && magic[0] == 'P' && magic[1] == 'K';
  if (!looks_like_zip) {
    if (static_cast<unsigned char>(magic[0]) == 0x80)
      throw Error(path +
                  ": a legacy (pre-zip) torch.save pickle, not a TorchScript archive; export the "
                  "model with torch.jit.save(torch.jit.script(model), path)");
    throw Error(path +
                ": not a zip file, so not a TorchScript archive (torch.jit.save writes zip "
                "archives)");
  }
  int code = 0;
  zip_t* z = open_zip_file(path, ZIP_RDONLY | (check_consistency ? ZIP_CHECKCONS : 0), &code);
  if (z == nullptr) {
    // the message is the project's, not libzip's wording, which changes between versions
    if (code == ZIP_ER_MEMORY) throw std::bad_alloc();  // naming_out_of_memory names the stage
    // a zip whose directory at the end is missing was cut short (or is not a zip after all);
    // libzip 1.7 says ZIP_ER_NOZIP, later ones ZIP_ER_TRUNCATED_ZIP
    if (code == ZIP_ER_NOZIP
#ifdef ZIP_ER_TRUNCATED_ZIP
        || code == ZIP_ER_TRUNCATED_ZIP
#endif
    )
      throw Error(path +
                  ": truncated or damaged zip archive (its directory at the end is missing)");
    zip_error_t error;
    zip_error_init_with_code(&error, code);
    std::string reason = zip_error_strerror(&error);
    zip_error_fini(&error);
    throw Error(path + ": truncated or damaged zip archive (" + reason + ")");
  }
  return ZipHandle(z);
}

// Deflate cannot expand data by more than 1032:1; a member that claims more is a bomb or damage.
constexpr zip_uint64_t kMaxDeflateRatio = 1032;

// Why the member `st` must not be inflated, or nothing: only stored and deflated members (all
// that torch.save, torch.jit.save and numpy write, and all that LibTorch's reader reads), with a
// declared size its compressed size can hold.
std::optional<std::string> member_problem(const zip_stat_t& st) {
  if (!(st.valid & ZIP_STAT_COMP_METHOD) || !(st.valid & ZIP_STAT_SIZE) ||
      !(st.valid & ZIP_STAT_COMP_SIZE))
    return std::string("its size or compression is not recorded");
  if (st.comp_method == ZIP_CM_STORE) {
    if (st.size != st.comp_size)
      return "it is stored uncompressed, but declares " + std::to_string(st.size) + " bytes for " +
             std::to_string(st.comp_size);
    return std::nullopt;
  }
  if (st.comp_method == ZIP_CM_DEFLATE) {
    if (st.size / kMaxDeflateRatio > st.comp_size)
      return "it declares " + std::to_string(st.size) + " bytes from " +
             std::to_string(st.comp_size) + " deflated ones, more than deflate can expand";
    return std::nullopt;
  }
  return "it is compressed with method " + std::to_string(st.comp_method) +
         ", which torch.save, torch.jit.save and numpy never use (stored and deflate only)";
}

void check_members(zip_t* z, const std::string& path) {
  const zip_int64_t n = zip_get_num_entries(z, 0);
  for (zip_int64_t i = 0; i < n; ++i) {
    zip_stat_t st;
    if (zip_stat_index(z, static_cast<zip_uint64_t>(i), 0, &st) != 0)
      throw Error(path + ": damaged zip archive (an unreadable directory entry)");
    if (const auto problem = member_problem(st))
      throw Error(path + ": the member " +
                  printable((st.valid & ZIP_STAT_NAME) ? st.name : "?", 200) +
                  " cannot be read safely: " + *problem);
  }
}

bool has_entry(zip_t* z, const std::string& name) {
  return zip_name_locate(z, name.c_str(), 0) >= 0;
}

bool has_entry_under(zip_t* z, std::string_view folder) {
  const zip_int64_t n = zip_get_num_entries(z, 0);
  for (zip_int64_t i = 0; i < n; ++i) {
    const char* name = zip_get_name(z, static_cast<zip_uint64_t>(i), 0);
    if (name != nullptr && std::string_view(name).substr(0, folder.size()) == folder) return true;
  }
  return false;
}

// The folder that holds data.pkl, as PyTorch's reader finds it: the first entry's top folder.
std::string find_record_prefix(zip_t* z, const std::string& path) {
  if (zip_get_num_entries(z, 0) <= 0)
    throw Error(path + ": an empty zip archive, not a TorchScript archive");
  const char* first = zip_get_name(z, 0, 0);
  const std::string_view name = first ? first : "";
  const auto slash = name.find('/');
  std::string prefix =
      slash == std::string_view::npos ? "" : std::string(name.substr(0, slash + 1));
  if (prefix.empty() || !has_entry(z, prefix + "data.pkl"))
    throw Error(path + ": a zip archive without data.pkl, not a PyTorch archive");
  return prefix;
}

std::uint64_t read_version(zip_t* z, const std::string& prefix, const std::string& path) {
  std::string record = prefix + "version";
  if (!has_entry(z, record)) record = prefix + ".data/version";
  zip_stat_t st;
  if (zip_stat(z, record.c_str(), 0, &st) != 0)
    throw Error(path + ": the archive has no version record");
  constexpr zip_uint64_t kMaxVersionBytes = 64;
  if (!(st.valid & ZIP_STAT_SIZE) || st.size == 0 || st.size > kMaxVersionBytes)
    throw Error(path + ": the archive's version record is malformed");
  ZipFileHandle file(zip_fopen(z, record.c_str(), 0));
  std::string text(st.size, '\0');
  if (!file || zip_fread(file.get(), text.data(), st.size) != static_cast<zip_int64_t>(st.size))
    throw Error(path + ": cannot read the archive's version record (damaged archive)");
  std::uint64_t version = 0;
  std::size_t digits = 0;
  for (char c : text) {
    if (c >= '0' && c <= '9' && digits < 18) {
      version = version * 10 + static_cast<std::uint64_t>(c - '0');
      ++digits;
    } else if (c == '\n' || c == '\r' || c == ' ') {
      continue;
    } else {
      throw Error(path + ": the archive's version record is malformed");
    }
  }
  if (digits == 0) throw Error(path + ": the archive's version record is malformed");
  return version;
}

}  // namespace

ArchiveLayout probe_torchscript_archive(const std::string& path) {
  check_regular_file(path);
  ZipHandle zip = open_zip(path);
  const std::string prefix = find_record_prefix(zip.get(), path);
  check_members(zip.get(), path);
  const bool scripted = has_entry(zip.get(), prefix + "constants.pkl") ||
                        has_entry_under(zip.get(), prefix + "code/");
  if (!scripted)
    throw Error(path +
                ": a torch.save file (tensors or a state dict), not a TorchScript archive; export "
                "the model with torch.jit.save(torch.jit.script(model), path)");
  const std::uint64_t version = read_version(zip.get(), prefix, path);
  return ArchiveLayout{prefix, version, std::shared_ptr<zip_t>(zip.release(), ZipCloser())};
}

namespace {

// The probe's zip (its directory read once), or the file opened again for a layout made by hand
// (probed, and so checked, before).
std::shared_ptr<zip_t> zip_of(const std::string& path, const ArchiveLayout& layout) {
  if (layout.opened) return layout.opened;
  return std::shared_ptr<zip_t>(open_zip(path, false).release(), ZipCloser());
}

}  // namespace

std::optional<std::string> read_archive_record(const std::string& path, const ArchiveLayout& layout,
                                               const std::string& name, std::size_t max_bytes) {
  const std::shared_ptr<zip_t> zip = zip_of(path, layout);
  const std::string member = layout.record_prefix + name;
  zip_stat_t st;
  const zip_int64_t index = zip_name_locate(zip.get(), member.c_str(), 0);
  if (index < 0 || zip_stat_index(zip.get(), static_cast<zip_uint64_t>(index), 0, &st) != 0)
    return std::nullopt;
  if (!(st.valid & ZIP_STAT_SIZE) || st.size > max_bytes)
    throw Error(path + ": the record " + name + " is larger than " + std::to_string(max_bytes) +
                " bytes");
  return read_member(zip.get(), static_cast<zip_uint64_t>(index), st.size, path, name);
}

std::vector<std::pair<std::string, std::string>> read_archive_records(
    const std::string& path, const ArchiveLayout& layout,
    const std::function<bool(std::string_view)>& wanted, std::size_t max_bytes,
    std::size_t max_total_bytes, RecordChecksums* data_checksums) {
  std::vector<std::pair<std::string, std::string>> records;
  std::size_t total = 0;
  const std::shared_ptr<zip_t> zip = zip_of(path, layout);
  const zip_int64_t n = zip_get_num_entries(zip.get(), 0);
  for (zip_int64_t i = 0; i < n; ++i) {
    zip_stat_t st;
    if (zip_stat_index(zip.get(), static_cast<zip_uint64_t>(i), 0, &st) != 0 ||
        !(st.valid & ZIP_STAT_NAME) || !(st.valid & ZIP_STAT_SIZE))
      continue;
    const std::string_view name(st.name);
    if (name.substr(0, layout.record_prefix.size()) != layout.record_prefix) continue;
    std::string record(name.substr(layout.record_prefix.size()));
    if (data_checksums && record.rfind("data/", 0) == 0 && (st.valid & ZIP_STAT_CRC)) {
      char hex[9];
      std::snprintf(hex, sizeof hex, "%08x", static_cast<unsigned>(st.crc));
      data_checksums->emplace(record.substr(5), hex);
    }
    if (!wanted(record)) continue;
    if (st.size > max_bytes)
      throw Error(path + ": the record " + printable(record) + " is larger than " +
                  std::to_string(max_bytes) + " bytes");
    total += st.size;
    if (total > max_total_bytes)
      throw Error(path + ": the records it holds for this add up to more than " +
                  std::to_string(max_total_bytes) + " bytes (at " + printable(record) + ")");
    std::string bytes = read_member(zip.get(), static_cast<zip_uint64_t>(i), st.size, path, record);
    records.emplace_back(std::move(record), std::move(bytes));
  }
  return records;
}

void check_archive_records(const std::string& path, const ArchiveLayout& layout) {
  constexpr std::size_t kMaxPickleBytes = std::size_t{1} << 30;
  const auto is_pickle = [](std::string_view name) {
    return ends_with(name, ".pkl") || ends_with(name, ".debug_pkl");
  };
  const auto records = read_archive_records(
      path, layout, [&](std::string_view name) { return is_pickle(name) || is_code_record(name); },
      kMaxPickleBytes, kMaxPickleBytes + kCodeLimits.max_bytes);
  std::vector<std::pair<std::string_view, std::string_view>> code;
  for (const auto& [record, bytes] : records) {
    if (is_pickle(record)) {
      if (const auto problem = pickle_problem(bytes))
        throw Error(path + ": the record " + printable(record) +
                    " cannot be read safely: " + *problem);
    } else {
      code.emplace_back(record, bytes);
    }
  }
  if (const auto problem = code_problem(code))
    throw Error(path + ": " + *problem + "; LibTorch would compile it (refused before loading)");
}

std::optional<std::string> code_problem(
    const std::vector<std::pair<std::string_view, std::string_view>>& code,
    const CodeLimits& limits) {
  std::size_t bytes = 0, lines = 0;
  for (const auto& [record, source] : code) {
    bytes += source.size();
    lines += static_cast<std::size_t>(std::count(source.begin(), source.end(), '\n'));
    if (bytes > limits.max_bytes)
      return "its code/ holds more than " + std::to_string(limits.max_bytes) + " bytes";
    if (lines > limits.max_lines)
      return "its code/ holds more than " + std::to_string(limits.max_lines) + " lines";
    // brackets and indentation nest the TorchScript parser's recursion
    BracketCounter brackets;
    std::size_t pos = 0;
    while (pos < source.size()) {
      std::size_t end = source.find('\n', pos);
      if (end == std::string_view::npos) end = source.size();
      const std::string_view line = source.substr(pos, end - pos);
      pos = end + 1;
      const std::size_t indent = std::min(line.find_first_not_of(' '), line.size());
      if (indent / 2 > limits.max_indent)
        return "its " + printable(std::string(record)) + " nests blocks more than " +
               std::to_string(limits.max_indent) + " deep";
      brackets.feed_line(line);
      if (static_cast<std::size_t>(brackets.deepest()) > limits.max_brackets)
        return "its " + printable(std::string(record)) + " nests brackets more than " +
               std::to_string(limits.max_brackets) + " deep";
    }
  }
  return std::nullopt;
}

struct ZipMembers::Handle {
  ZipHandle zip;
};

ZipMembers::ZipMembers(const std::string& path) : path_(path), handle_(nullptr) {
  check_regular_file(path);
  ZipHandle zip = open_zip(path);
  check_members(zip.get(), path);
  if (zip_get_num_entries(zip.get(), 0) <= 0) throw Error(path + ": an empty zip archive");
  const char* first = zip_get_name(zip.get(), 0, 0);
  const std::string_view name = first ? first : "";
  const auto slash = name.find('/');
  prefix_ = slash == std::string_view::npos ? "" : std::string(name.substr(0, slash + 1));
  handle_ = new Handle{std::move(zip)};
}

ZipMembers::~ZipMembers() { delete handle_; }

std::optional<std::string> ZipMembers::read(const std::string& name, std::size_t max_bytes) const {
  zip_stat_t st;
  const zip_int64_t index = zip_name_locate(handle_->zip.get(), name.c_str(), 0);
  if (index < 0 ||
      zip_stat_index(handle_->zip.get(), static_cast<zip_uint64_t>(index), 0, &st) != 0)
    return std::nullopt;
  if (!(st.valid & ZIP_STAT_SIZE) || st.size > max_bytes)
    throw Error(path_ + ": the record " + printable(name) + " is larger than " +
                std::to_string(max_bytes) + " bytes");
  return read_member(handle_->zip.get(), static_cast<zip_uint64_t>(index), st.size, path_, name);
}

void check_zip_members(const std::string& path) {
  int code = 0;
  ZipHandle zip(open_zip_file(path, ZIP_RDONLY, &code));
  if (!zip) return;  // the reader that follows says what is wrong with it
  check_members(zip.get(), path);
}

bool is_code_record(std::string_view name) {
  return name.substr(0, 5) == "code/" && ends_with(name, ".py");
}

bool file_starts_with(const std::string& path, std::string_view magic) {
  std::ifstream in(path, std::ios::binary);
  std::string head(magic.size(), '\0');
  in.read(head.data(), static_cast<std::streamsize>(magic.size()));
  return static_cast<std::size_t>(in.gcount()) == magic.size() && head == magic;
}

std::vector<std::string> zip_member_names(const std::string& path) {
  std::vector<std::string> names;
  int code = 0;
  ZipHandle zip(open_zip_file(path, ZIP_RDONLY, &code));
  if (!zip) return names;
  const zip_int64_t n = zip_get_num_entries(zip.get(), 0);
  for (zip_int64_t i = 0; i < n; ++i) {
    const char* name = zip_get_name(zip.get(), static_cast<zip_uint64_t>(i), 0);
    names.emplace_back(name ? name : "");
  }
  return names;
}

bool is_torchscript_archive(const std::string& path) {
  if (!file_starts_with(path, "PK")) return false;
  for (const std::string& name : zip_member_names(path)) {
    const std::size_t slash = name.find('/');
    if (slash == std::string::npos) continue;
    const std::string_view record = std::string_view(name).substr(slash + 1);
    if (record == "data.pkl" || record.substr(0, 5) == "code/") return true;
  }
  return false;
}

}  // namespace vin::diagnostics
