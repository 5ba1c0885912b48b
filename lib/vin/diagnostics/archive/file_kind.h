// What a file is, decided once and in one place: every command that takes a file (inspect-model,
// inspect-config, diff's sides, capture's and compare's archives and inputs) asks classify_file,
// and the readers then take the file and the zip it opened (docs/inputs.md, Telling files apart).
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "vin/diagnostics/archive/input_file.h"
#include "vin/diagnostics/archive/zip_archive.h"

namespace vin::diagnostics {

enum class FileKind {
  torchscript_archive,  ///< a zip with TOP/data.pkl and TOP/constants.pkl or TOP/code/ (torch.jit.save)
  torch_save_zip,       ///< a zip with TOP/data.pkl and neither (torch.save since PyTorch 1.6)
  other_zip,            ///< any other zip (numpy's .npz among them)
  legacy_torchscript,   ///< a zip with TOP/model.json and no data.pkl (PyTorch 1.0 to 1.2)
  torch_export,  ///< a zip torch.export.save or AOTInductor wrote (.pt2; export_archive.h)
  pytorch1_container,   ///< starts with PYTORCH1: the container of PyTorch 1.0's previews
  npy,                  ///< numpy's .npy (starts with \x93NUMPY)
  legacy_pickle,        ///< torch.save before PyTorch 1.6: a pickle of its magic number first
  records,  ///< text whose first byte that is not white space is '{': saved records (jsonl or
            ///< json, saved_records_of) or another JSON file
  text,                 ///< any other text, YAML above all
  safetensors,   ///< an 8-byte little-endian length, a JSON object header of that length, data
  weights_index,  ///< JSON whose first key is "weight_map" or "metadata": a sharded checkpoint's
                  ///< index (model.safetensors.index.json, pytorch_model.bin.index.json)
  lfs_pointer,    ///< the text Git LFS leaves in place of a file not fetched
  torch_save_tar,  ///< a tar of `sys_info`, `pickle`, `tensors`, `storages`: torch.save of 0.1-0.3
                   ///< (one with `pickle` and `storages`, or `sys_info` first)
  tar,             ///< any other tar archive (ustar)
  pickle,          ///< a pickle (starts with 0x80) that is not a legacy torch.save file
  seven_zip,       ///< a 7z archive
  compressed,      ///< gzip, bzip2, xz or zstd data
  empty,           ///< no bytes at all
};

/// A short name for messages ("a TorchScript archive", "an .npz or other zip file", ...).
std::string_view describe(FileKind kind);

/// A file opened once and what it is. For the zip kinds `zip` is the zip opened once, its
/// directory read and checked (ZipArchive); readers take it instead of opening the file again.
struct ClassifiedFile {
  InputFilePtr file;
  FileKind kind = FileKind::empty;
  ZipArchivePtr zip;  ///< for torchscript_archive, torch_save_zip and other_zip

  const std::string& path() const { return file->path(); }
};

/// Whether files of `kind` are neither a configuration rendering nor records (weights files,
/// which inspect-model and diff describe (archive/weights_file) and capture takes as inputs
/// where they are torch.save files, tar, 7z, LFS pointers, ...): inspect-config and diff's
/// other sides refuse them naming what they are (what_it_is).
bool unread_kind(FileKind kind);

/// What `file` is, in words for a refusal: describe(kind); for a Git LFS pointer the size and
/// object it points to and how to fetch it; for JSON, saved records and the command that wrote
/// them (its first record's name, or its --format json document's first key), or "a JSON file".
std::string what_it_is(const ClassifiedFile& file);

/// For JSON (FileKind::records) that holds records this tool writes: the command that wrote
/// them ("inspect-model", "profile", ...; "" for a record name this version does not write);
/// nothing for any other file, or JSON of another kind (which YAML reads as a mapping).
std::optional<std::string> saved_records_of(const ClassifiedFile& file);

/// Opens `path` (InputFile::open) and tells what it is from its structure: a safetensors
/// header whose length and braces fit the file (whatever its first bytes are: `PK` or 0x80
/// among them), a zip's directory, a tar's header, a JSON object's first key, and otherwise
/// its first bytes. A safetensors file that breaks the format is still one where its shape says
/// so (a '{' at byte 8 after a binary length) or where its name ends with .safetensors and the
/// content is no other format (text, a zip that does not open): its reader then names the rule
/// it breaks. Content that is clearly another format wins over the name. Throws Error naming
/// the file when it cannot be opened, or when it starts as a zip that is damaged or holds a
/// member that cannot be read safely (ZipArchive; not for a file named .safetensors). A file of
/// another kind than its reader wants is for that reader to refuse, with its own words.
/// `what`: what the caller wants, for the message about a directory (InputFile::open).
ClassifiedFile classify_file(const std::string& path, std::string_view what = {});

}  // namespace vin::diagnostics
