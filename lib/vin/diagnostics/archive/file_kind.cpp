#include "vin/diagnostics/archive/file_kind.h"

#include <cctype>
#include <vector>

namespace vin::diagnostics {
namespace {

// The first byte that is not white space is '{' (reads no further than that byte).
bool starts_as_json_object(const InputFile& file) {
  std::vector<char> chunk(64 * 1024);
  for (std::uint64_t at = 0; at < file.size();) {
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
  const std::string top = zip.first_folder();
  if (top.empty() || !zip.find(top + "data.pkl")) return FileKind::other_zip;
  const bool scripted = zip.find(top + "constants.pkl") || zip.has_entry_under(top + "code/");
  return scripted ? FileKind::torchscript_archive : FileKind::torch_save_zip;
}

}  // namespace

std::string_view describe(FileKind kind) {
  switch (kind) {
    case FileKind::torchscript_archive:
      return "a TorchScript archive";
    case FileKind::torch_save_zip:
      return "a torch.save file";
    case FileKind::other_zip:
      return "a zip file";
    case FileKind::npy:
      return "an .npy array";
    case FileKind::legacy_pickle:
      return "a pickle (a torch.save file before PyTorch 1.6)";
    case FileKind::records:
      return "JSON records";
    case FileKind::text:
      return "a text file";
    case FileKind::empty:
      return "an empty file";
  }
  return "a file";
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
