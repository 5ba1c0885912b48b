#include "vin/diagnostics/archive/file_kind.h"

#include <cctype>
#include <iterator>
#include <vector>

#include "vin/diagnostics/archive/export_archive.h"

namespace vin::diagnostics {
namespace {

// The first byte that is not white space is '{' (reads no further than that byte), after a
// UTF-8 byte-order mark where the file has one (editors on Windows write it before jsonl too).
bool starts_as_json_object(const InputFile& file) {
  std::vector<char> chunk(64 * 1024);
  std::uint64_t at = file.starts_with("\xEF\xBB\xBF") ? 3 : 0;
  while (at < file.size()) {
    const std::size_t got = file.read_at(at, chunk.data(), chunk.size());
    if (got == 0) break;
    for (std::size_t i = 0; i < got; ++i)
      if (!std::isspace(static_cast<unsigned char>(chunk[i]))) return chunk[i] == '{';
    at += got;
  }
  return false;
}

FileKind zip_kind(const ZipArchive& zip) {
  // PyTorch's writers put every record under one top folder, the first member's
  if (export_layout(zip)) return FileKind::torch_export;
  const std::string top = zip.first_folder();
  if (top.empty()) return FileKind::other_zip;
  if (!zip.find(top + "data.pkl"))
    return zip.find(top + "model.json") ? FileKind::legacy_torchscript : FileKind::other_zip;
  const bool scripted = zip.find(top + "constants.pkl") || zip.has_entry_under(top + "code/");
  return scripted ? FileKind::torchscript_archive : FileKind::torch_save_zip;
}

}  // namespace

std::string_view describe(FileKind kind) {
  // in the order of the enum
  static constexpr std::string_view kNames[] = {
      "a TorchScript archive",
      "a torch.save file",
      "a zip file",
      "a TorchScript archive of PyTorch 1.0 to 1.2 (model.json)",
      "a torch.export archive (.pt2)",
      "a TorchScript file of PyTorch 1.0's previews (PYTORCH1)",
      "an .npy array",
      "a pickle (a torch.save file before PyTorch 1.6)",
      "JSON records",
      "a text file",
      "an empty file"};
  static_assert(std::size(kNames) == static_cast<std::size_t>(FileKind::empty) + 1);
  const auto index = static_cast<std::size_t>(kind);
  return index < std::size(kNames) ? kNames[index] : "a file";
}

ClassifiedFile classify_file(const std::string& path, std::string_view what) {
  ClassifiedFile out;
  out.file = InputFile::open(path, what);
  const InputFile& file = *out.file;
  if (file.size() == 0) {
    out.kind = FileKind::empty;
  } else if (file.starts_with("PK")) {
    out.zip = std::make_shared<const ZipArchive>(out.file);
    out.kind = zip_kind(*out.zip);
  } else if (file.starts_with("PYTORCH1")) {
    out.kind = FileKind::pytorch1_container;
  } else if (file.starts_with("\x93NUMPY")) {
    out.kind = FileKind::npy;
  } else if (file.starts_with("\x80")) {
    out.kind = FileKind::legacy_pickle;
  } else {
    out.kind = starts_as_json_object(file) ? FileKind::records : FileKind::text;
  }
  return out;
}

}  // namespace vin::diagnostics
