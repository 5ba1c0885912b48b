#include "vin/diagnostics/formats/file_format.h"

#include <iterator>

namespace vin::diagnostics {

namespace {
constexpr std::string_view kExportWithJit =
    "export the model with torch.jit.save(torch.jit.script(model), path)";
}  // namespace

// The formats, in FileKind's order. `uses` is what the readers take today: a TorchScript
// archive as inputs too (torch.save's reader then says what it cannot rebuild), an .npz as
// inputs and as compare's saved side.
const FileFormat kFileFormats[] = {
    {FileKind::torchscript_archive, "torchscript", "a TorchScript archive",
     FormatFamily::torchscript, kDescribe | kRun | kConfig | kInputs, ""},
    {FileKind::torch_save_zip, "torch_save_zip", "a torch.save file", FormatFamily::weights,
     kDescribe | kInputs, kExportWithJit},
    {FileKind::other_zip, "zip", "a zip file", FormatFamily::arrays, kInputs | kSavedTensors, ""},
    {FileKind::legacy_torchscript, "torchscript_model_json",
     "a TorchScript archive of PyTorch 1.0 to 1.2 (model.json)", FormatFamily::torchscript,
     kDescribe, "",
     "LibTorch 2 and builds of 1.x without legacy import cannot load; only inspect-model and "
     "diff read it here. Load it with PyTorch 1.x's torch.jit.load and save it again with "
     "torch.jit.save for today's format",
     kRun | kConfig},
    {FileKind::torch_export, "torch_export", "a torch.export archive (.pt2)",
     FormatFamily::export_program, kDescribe | kRunProgram, "",
     "this reader of TorchScript archives does not run: capture, compare and profile run it with "
     "this tool's interpreter of the exported graph (docs/export.md), inspect-model and diff "
     "describe it",
     kRun},
    {FileKind::pytorch1_container, "pytorch1_container",
     "a TorchScript file of PyTorch 1.0's previews (PYTORCH1)", FormatFamily::other, 0, "",
     "no released PyTorch reads (2018, before the zip archives of PyTorch 1.0); export the "
     "model again with a released PyTorch's torch.jit.save",
     ~0u},
    {FileKind::npy, "npy", "an .npy array", FormatFamily::arrays, kInputs, ""},
    {FileKind::legacy_pickle, "torch_save_legacy",
     "a pickle (a torch.save file before PyTorch 1.6)", FormatFamily::weights,
     kDescribe | kInputs, kExportWithJit},
    // saved records serve diff alone; other JSON is YAML, a rendering (open_model_file tells)
    {FileKind::records, "records", "JSON (saved records, or another JSON file)",
     FormatFamily::records, kRecords | kConfig, ""},
    {FileKind::text, "text", "a text file", FormatFamily::text, kConfig,
     "torch.jit.save writes zip archives"},
    {FileKind::safetensors, "safetensors", "a safetensors file", FormatFamily::weights,
     kDescribe, ""},
    {FileKind::weights_index, "sharded", "the index of a sharded checkpoint (JSON)",
     FormatFamily::weights, kDescribe, ""},
    {FileKind::lfs_pointer, "lfs_pointer", "a Git LFS pointer", FormatFamily::other, 0, ""},
    {FileKind::torch_save_tar, "torch_save_tar", "a torch.save file of PyTorch 0.1 to 0.3 (tar)",
     FormatFamily::weights, kDescribe | kInputs, kExportWithJit},
    {FileKind::tar, "tar", "a tar archive", FormatFamily::other, 0, ""},
    {FileKind::pickle, "pickle", "a pickle", FormatFamily::other, 0, ""},
    {FileKind::seven_zip, "7z", "a 7z archive", FormatFamily::other, 0, ""},
    {FileKind::compressed, "compressed", "compressed data (gzip, bzip2, xz or zstd)",
     FormatFamily::other, 0, ""},
    {FileKind::empty, "empty", "an empty file", FormatFamily::other, 0, ""},
};
const std::size_t kFileFormatCount = std::size(kFileFormats);
static_assert(std::size(kFileFormats) == static_cast<std::size_t>(FileKind::empty) + 1,
              "a row for every FileKind");

const FileFormat& format_of(FileKind kind) { return kFileFormats[static_cast<std::size_t>(kind)]; }

std::string_view describe(FileKind kind) { return format_of(kind).phrase; }

bool serves(FileKind kind, unsigned use) { return (format_of(kind).uses & use) != 0; }

bool is_weights_kind(FileKind kind) { return format_of(kind).family == FormatFamily::weights; }

std::string formats_serving(unsigned use) {
  std::string out;
  std::size_t count = 0, total = 0;
  for (const FileFormat& f : kFileFormats) total += (f.uses & use) != 0;
  for (const FileFormat& f : kFileFormats) {
    if ((f.uses & use) == 0) continue;
    ++count;
    out += count == 1 ? "" : count == total ? " or " : ", ";
    out += f.phrase;
  }
  return out;
}

}  // namespace vin::diagnostics
