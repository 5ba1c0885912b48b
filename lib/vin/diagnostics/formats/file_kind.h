// What a file is, decided once and in one place: every command that takes a file (inspect-model,
// inspect-config, diff's sides, capture's and compare's archives and inputs) asks classify_file
// (through open_model_file, model_file.h), and the readers then take the file and the zip it
// opened (docs/inputs.md, Telling files apart). The formats themselves are file_format.h's.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "vin/diagnostics/container/input_file.h"
#include "vin/diagnostics/formats/file_format.h"
#include "vin/diagnostics/container/zip_archive.h"

namespace vin::diagnostics {

/// A file opened once and what it is. For the zip kinds `zip` is the zip opened once, its
/// directory read and checked (ZipArchive); readers take it instead of opening the file again.
struct ClassifiedFile {
  InputFilePtr file;
  FileKind kind = FileKind::empty;
  ZipArchivePtr zip;  ///< for torchscript_archive, torch_save_zip and other_zip

  const std::string& path() const { return file->path(); }
};

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
/// The same for a file opened already (InputFile::from_bytes, a fuzzer's input), its path
/// (the name hint above) its label.
ClassifiedFile classify(InputFilePtr file);

/// Whether a stream that starts with `head` (InputFile::kHeadBytes) starts as one of the binary
/// formats the tool reads (a zip, a pickle, an .npy array, a safetensors file, ...): what
/// InputFile::open copies of a stream that is not text (classify_file passes it).
bool starts_a_binary_format(std::string_view head);

}  // namespace vin::diagnostics
