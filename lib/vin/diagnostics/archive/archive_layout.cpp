#include "vin/diagnostics/archive/archive_layout.h"

#include <algorithm>
#include <cstdio>
#include <optional>
#include <string_view>
#include <vector>

#include "vin/diagnostics/archive/class_source.h"
#include "vin/diagnostics/archive/legacy_archive.h"
#include "vin/diagnostics/archive/pickle_safety.h"
#include "vin/diagnostics/records/error.h"
#include "vin/diagnostics/text/printable.h"

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

// torch.package (torch/package/package_exporter.py) writes its bookkeeping under .data/ of its top
// folder: extern_modules, python_version, version.
bool is_torch_package(const ZipArchive& zip) {
  const std::string top = zip.first_folder();
  return zip.find(top + ".data/extern_modules") || zip.find(top + ".data/python_version");
}

// The class a torch.save file's data.pkl is an instance of, when it is a Python object rather
// than tensors or a state dict (torch.save(model, path) of a whole nn.Module): its first opcode
// after the protocol is a GLOBAL naming the class, "module\nname\n" (protocol 2, torch.save's).
std::optional<std::string> pickled_object_class(const ZipArchive& zip) {
  const auto index = zip.find(zip.first_folder() + "data.pkl");
  if (!index) return std::nullopt;
  std::string head(512, '\0');  // the first opcodes only: the class is named at the start
  ZipArchive::Member member = zip.open(*index, "data.pkl");
  head.resize(member.read(head.data(), head.size()));
  const std::string* pickle = &head;
  if (pickle->size() < 4 || pickle->compare(0, 3,
                                            "\x80\x02"
                                            "c") != 0)
    return std::nullopt;
  const std::size_t module_end = pickle->find('\n', 3);
  if (module_end == std::string::npos) return std::nullopt;
  const std::size_t name_end = pickle->find('\n', module_end + 1);
  if (name_end == std::string::npos) return std::nullopt;
  const std::string module = pickle->substr(3, module_end - 3);
  const std::string name = pickle->substr(module_end + 1, name_end - module_end - 1);
  // what tensors and state dicts begin with
  if (module == "collections" || module == "torch._utils" || module == "torch" ||
      module == "builtins" || module.rfind("numpy", 0) == 0)
    return std::nullopt;
  return module + "." + name;
}

}  // namespace

ArchiveLayout probe_torchscript_archive(const ClassifiedFile& file) {
  const std::string& path = file.path();
  switch (file.kind) {
    case FileKind::torchscript_archive:
      break;
    case FileKind::empty:
      throw Error(path + ": empty file, not a TorchScript archive");
    case FileKind::legacy_pickle:
      throw Error(path +
                  ": a legacy (pre-zip) torch.save pickle, not a TorchScript archive; export the "
                  "model with torch.jit.save(torch.jit.script(model), path)");
    case FileKind::text:  // no reader's: the last word only for a file nothing recognises
      throw Error(path +
                  ": not a zip file, so not a TorchScript archive (torch.jit.save writes zip "
                  "archives)");
    case FileKind::records:
      if (saved_records_of(file))
        throw Error(path + ": " + what_it_is(file) +
                    ", not a model file; diff compares saved records with a model");
      throw Error(path + ": " + what_it_is(file) + ", not a TorchScript archive");
    case FileKind::lfs_pointer:
      throw Error(path + ": " + what_it_is(file));
    case FileKind::npy:
    case FileKind::safetensors:
    case FileKind::weights_index:
    case FileKind::torch_save_tar:
    case FileKind::tar:
    case FileKind::pickle:
    case FileKind::seven_zip:
    case FileKind::compressed:
      throw Error(path + ": " + what_it_is(file) + ", not a TorchScript archive");
    case FileKind::other_zip:
      if (file.zip->entries().empty())
        throw Error(path + ": an empty zip archive, not a TorchScript archive");
      if (is_torch_package(*file.zip))
        throw Error(path +
                    ": a torch.package archive (torch.package.PackageExporter), which only "
                    "Python's torch.package.PackageImporter loads: it holds Python code and "
                    "pickles, not a TorchScript archive; export the model with "
                    "torch.jit.save(torch.jit.script(model), path)");
      throw Error(path + ": a zip archive without data.pkl, not a PyTorch archive");
    case FileKind::legacy_torchscript:
      throw Error(legacy_archive_message(path));
    case FileKind::torch_export:
      throw NotRunnable(path +
                  ": a torch.export archive (.pt2), which capture, compare and profile do not "
                  "run: they run TorchScript archives with LibTorch's TorchScript interpreter, "
                  "and running an exported program needs torch.export.load in Python (or "
                  "AOTInductor's runner for a compiled package); inspect-model and diff describe "
                  "it");
    case FileKind::pytorch1_container:
      throw Error(path +
                  ": a TorchScript file in the container format of PyTorch 1.0's previews "
                  "(PYTORCH1, 2018, before the zip archives of PyTorch 1.0), which no released "
                  "PyTorch reads; export the model again with a released PyTorch's torch.jit.save");
    case FileKind::torch_save_zip:
      if (const auto object_class = pickled_object_class(*file.zip))
        throw Error(path + ": a torch.save file holding a pickled Python object of class " +
                    printable(*object_class, 200) +
                    " (torch.save of a whole model), which only Python with that class's code "
                    "loads; make an archive this tool reads with "
                    "torch.jit.save(torch.jit.script(model), path) or torch.jit.trace");
      throw Error(path +
                  ": a torch.save file (tensors or a state dict), not a TorchScript archive; "
                  "export the model with torch.jit.save(torch.jit.script(model), path)");
  }
  const std::string prefix = file.zip->first_folder();
  return ArchiveLayout{prefix, read_version(*file.zip, prefix), file.zip};
}

ArchiveLayout probe_torchscript_archive(const std::string& path) {
  return probe_torchscript_archive(classify_file(path, "a TorchScript archive"));
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
