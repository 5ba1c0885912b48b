// The formats the tool tells apart, each declared once (issue 69): its kind, its name, what it
// is in one phrase, what the commands may do with it, and what to do instead where a command
// refuses it. The classifier (file_kind.h) says which a file is; open_model_file (model_file.h)
// refuses, in the table's words, a file whose format does not serve what a command wants; the
// help text, the man page's list and WeightsFile.format come from here. Adding a format: a row
// here, its sniffing in file_kind.cpp, its reader in its own folder (ARCHITECTURE.md).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace vin::diagnostics {

/// What a file is (classify_file), one enumerator per row of kFileFormats, in its order.
enum class FileKind {
  torchscript_archive,  ///< a zip with TOP/data.pkl and TOP/constants.pkl or TOP/code/ (torch.jit.save)
  torch_save_zip,       ///< a zip with TOP/data.pkl and neither (torch.save since PyTorch 1.6)
  other_zip,            ///< any other zip (numpy's .npz among them)
  legacy_torchscript,   ///< a zip with TOP/model.json and no data.pkl (PyTorch 1.0 to 1.2)
  torch_export,  ///< a zip torch.export.save or AOTInductor wrote (.pt2; export/)
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

/// What a command wants of a file it opens; a format serves some (FileFormat::uses), and a
/// command may want several (diff takes a model, a configuration or saved records).
enum Use : unsigned {
  kDescribe = 1u << 0,      ///< inspect-model, diff: a model or weights described as data
  kRun = 1u << 1,           ///< capture, compare, profile: an archive LibTorch runs
  kInputs = 1u << 2,        ///< capture, compare, profile --inputs: forward's arguments
  kConfig = 1u << 3,        ///< inspect-config: a rendering, or an archive that carries one
  kRecords = 1u << 4,       ///< diff: records saved by inspect-model, inspect-config, profile
  kSavedTensors = 1u << 5,  ///< compare: a side of tensors saved by capture --save
  kRunProgram = 1u << 6,    ///< capture, compare, profile: an exported program, run by the .pt2 interpreter
};

/// Which reader family a format belongs to: the folder its reader lives in.
enum class FormatFamily { torchscript, export_program, weights, arrays, records, text, other };

/// One format.
struct FileFormat {
  FileKind kind;
  std::string_view name;    ///< its name in records and docs (WeightsFile.format for weights)
  std::string_view phrase;  ///< what it is, in messages: "a torch.save file"
  FormatFamily family;
  unsigned uses;            ///< the Use values it serves
  /// what to do instead, where a command that describes or runs models refuses it ("" for
  /// nothing to suggest)
  std::string_view hint;
  /// why a command refuses it, as a clause after "which" that replaces "not a TorchScript
  /// archive" for a model of another kind ("" for none), for the uses `which_for` names
  std::string_view which = {};
  unsigned which_for = 0;
};

/// The table: every format, in FileKind's order.
extern const FileFormat kFileFormats[];
extern const std::size_t kFileFormatCount;

/// The row of `kind`.
const FileFormat& format_of(FileKind kind);

/// What files of `kind` are, for messages ("a TorchScript archive", ...): format_of's phrase.
std::string_view describe(FileKind kind);

/// Whether files of `kind` serve `use` (one Use value, or several: any of them).
bool serves(FileKind kind, unsigned use);

/// Whether files of `kind` are weights files: a state dict, checkpoint, safetensors file or
/// sharded set (the weights/ readers').
bool is_weights_kind(FileKind kind);

/// The phrases of the formats that serve `use`, joined as a list for people ("a, b or c"):
/// what a command's help says it reads.
std::string formats_serving(unsigned use);

}  // namespace vin::diagnostics
