#include "vin/diagnostics/torchscript/archive_layout.h"

#include <algorithm>
#include <cstdio>
#include <optional>
#include <string_view>
#include <vector>

#include "vin/diagnostics/torchscript/class_source.h"
#include "vin/diagnostics/pickle/pickle_safety.h"
#include "vin/diagnostics/records/error.h"
#include "vin/diagnostics/text/printable.h"
#include "vin/diagnostics/container/crc32.h"

namespace vin::diagnostics {
namespace {

bool ends_with(std::string_view text, std::string_view suffix) {
  return text.size() >= suffix.size() && text.substr(text.size() - suffix.size()) == suffix;
}

std::uint64_t read_version(const ZipArchive& zip, const std::string& prefix) {
  const std::string& path = zip.path();
  auto index = zip.find(prefix + "version");
  if (!index) index = zip.find(prefix + ".data/version");
  if (!index) throw Error(path + ": the archive has no version record");
  constexpr std::uint64_t kMaxVersionBytes = 64;
  const std::uint64_t size = zip.entries()[*index].size;
  if (size == 0 || size > kMaxVersionBytes)
    throw Error(path + ": the archive's version record is malformed");
  const std::string text = zip.read(*index, kMaxVersionBytes, "version");
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

ArchiveLayout read_archive_layout(ZipArchivePtr zip) {
  const std::string prefix = zip->first_folder();
  const std::uint64_t version = read_version(*zip, prefix);
  return ArchiveLayout{prefix, version, std::move(zip)};
}

std::optional<std::string> read_archive_record(const ArchiveLayout& layout, const std::string& name,
                                               std::size_t max_bytes) {
  const auto index = layout.zip->find(layout.record_prefix + name);
  if (!index) return std::nullopt;
  return layout.zip->read(*index, max_bytes, printable(name));
}

std::vector<std::pair<std::string, std::string>> read_archive_records(
    const ArchiveLayout& layout, const std::function<bool(std::string_view)>& wanted,
    std::size_t max_bytes, std::size_t max_total_bytes, RecordChecksums* data_checksums) {
  const std::string& path = layout.path();
  std::vector<std::pair<std::string, std::string>> records;
  std::size_t total = 0;
  const auto& entries = layout.zip->entries();
  for (std::size_t i = 0; i < entries.size(); ++i) {
    const ZipArchive::Entry& st = entries[i];
    const std::string_view name(st.name);
    if (name.substr(0, layout.record_prefix.size()) != layout.record_prefix) continue;
    std::string record(name.substr(layout.record_prefix.size()));
    if (data_checksums && record.rfind("data/", 0) == 0) {
      data_checksums->emplace(record.substr(5), crc32_text(st.crc));
    }
    if (!wanted(record)) continue;
    if (st.size > max_bytes)
      throw Error(path + ": the record " + printable(record) + " is larger than " +
                  std::to_string(max_bytes) + " bytes");
    total += st.size;
    if (total > max_total_bytes)
      throw Error(path + ": the records it holds for this add up to more than " +
                  std::to_string(max_total_bytes) + " bytes (at " + printable(record) + ")");
    std::string bytes = layout.zip->read(i, st.size, printable(record));
    records.emplace_back(std::move(record), std::move(bytes));
  }
  return records;
}

void check_archive_records(const ArchiveLayout& layout) {
  const std::string& path = layout.path();
  constexpr std::size_t kMaxPickleBytes = std::size_t{1} << 30;
  const auto is_pickle = [](std::string_view name) {
    return ends_with(name, ".pkl") || ends_with(name, ".debug_pkl");
  };
  const auto records = read_archive_records(
      layout, [&](std::string_view name) { return is_pickle(name) || is_code_record(name); },
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

bool is_code_record(std::string_view name) {
  return name.substr(0, 5) == "code/" && ends_with(name, ".py");
}

}  // namespace vin::diagnostics
