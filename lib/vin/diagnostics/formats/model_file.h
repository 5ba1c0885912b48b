// Every model file a command takes is opened here (issue 69): open_model_file tells what the
// file is (classify_file) and refuses, in the format table's words (file_format.h), one whose
// format does not serve what the command wants; the readers of the formats that do are reached
// through the functions below, so no caller switches on a file's kind. inspect-model's records
// come from describe_model_file: the file read as data or, only when the user asks for it
// (--load-with-libtorch), LibTorch's loader, which runs the archive's TorchScript (`__setstate__`
// methods) and so is never used on its own initiative.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "vin/diagnostics/formats/file_kind.h"
#include "vin/diagnostics/records/model_metadata.h"
#include "vin/diagnostics/torch_save/torch_save_file.h"
#include "vin/diagnostics/torchscript/archive_layout.h"

namespace vin::diagnostics {

/// The file at `path`, opened once and told apart (classify_file; where `uses` has kDescribe, a
/// directory stands for the model file it holds: model_file_in_directory), refused (refuse)
/// unless its format serves one of `uses`. `what` names what the command wants, in the
/// message about a directory it does not take.
ClassifiedFile open_model_file(const std::string& path, unsigned uses, std::string_view what);

/// Whether `file` serves one of `uses`: its format's (file_format.h), saved records only diff's
/// (kRecords) and other JSON a rendering's (kConfig).
bool serves(const ClassifiedFile& file, unsigned uses);

/// Why a command that wants `uses` does not take `file`, in the table's words: "PATH: what it
/// is, not what the command wants; what to do instead".
std::string refusal(const ClassifiedFile& file, unsigned uses);
/// Throws refusal(file, uses): NotRunnable for a format that runs elsewhere (a .pt2 given to
/// capture, compare or profile), Error otherwise.
[[noreturn]] void refuse(const ClassifiedFile& file, unsigned uses);

/// `file` as a TorchScript archive: its layout, the version record read (classify_file read the
/// zip directory). Refuses any other file as capture, compare and profile do (kRun).
ArchiveLayout open_torchscript_archive(const ClassifiedFile& file);
/// open_model_file(path, kRun) and the above.
ArchiveLayout open_torchscript_archive(const std::string& path);

/// `file`, a torch.save file of any of its formats (the zip format, the legacy format before
/// PyTorch 1.6, PyTorch 0.1-0.3's tar format), read as data: its value (data.pkl of at most
/// `max_pickle_bytes` in a zip) and its storages. Refuses other files (kInputs).
std::unique_ptr<TorchSaveSource> open_torch_save(const ClassifiedFile& file,
                                                 std::uint64_t max_pickle_bytes);

/// The .npz `file` is (an arrays zip: numpy.savez, capture --save), or nullptr.
const ZipArchive* npz_of(const ClassifiedFile& file);
/// Whether `file` is one .npy array.
bool is_npy(const ClassifiedFile& file);
/// Whether `file` is a torch.export archive (the .pt2 interpreter runs its program).
bool is_export_program(const ClassifiedFile& file);
/// Whether `file` is a safetensors file (safetensors_content reads it).
bool is_safetensors(const ClassifiedFile& file);
/// Whether `file` is a torch.save file of any of its formats (open_torch_save opens it).
bool is_torch_save(const ClassifiedFile& file);

/// Loads the archive with LibTorch (through the same opened file) and inspects it, with
/// `details`; `why` says why the structure reader gave up.
using LibTorchInspector = std::function<ModelMetadata(
    const ArchiveLayout& archive, const InspectDetails& details, const std::string& why)>;

/// The inspect-model records of the model file at `path` (a TorchScript archive, one of PyTorch
/// 1.0 to 1.2, a .pt2, a weights file or sharded set, a directory holding one): read as data;
/// a TorchScript archive the structure reader cannot describe from `fallback` when one is
/// given, else refused naming the construct and the flag that would load it with LibTorch.
/// Throws Error for files that are no model file. `details` as read_archive_metadata takes them.
ModelMetadata describe_model_file(const std::string& path, const InspectDetails& details,
                                  const LibTorchInspector& fallback);
/// The same for a file opened already.
ModelMetadata describe_model_file(const ClassifiedFile& file, const InspectDetails& details,
                                  const LibTorchInspector& fallback);
/// The same for a TorchScript archive opened already.
ModelMetadata describe_model_file(const ArchiveLayout& archive, const InspectDetails& details,
                                  const LibTorchInspector& fallback);

/// The flag of inspect-model and diff that allows the LibTorch fallback.
inline constexpr const char* kLoadWithLibTorchFlag = "--load-with-libtorch";

}  // namespace vin::diagnostics
