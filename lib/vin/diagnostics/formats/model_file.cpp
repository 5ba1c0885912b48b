#include "vin/diagnostics/formats/model_file.h"

#include <filesystem>
#include <optional>
#include <utility>
#include <vector>

#include "vin/diagnostics/export/export_archive.h"
#include "vin/diagnostics/formats/weights_sets.h"
#include "vin/diagnostics/records/error.h"
#include "vin/diagnostics/text/printable.h"
#include "vin/diagnostics/torch_save/legacy_torch_save.h"
#include "vin/diagnostics/torch_save/torch_save_tar.h"
#include "vin/diagnostics/torchscript/archive_structure.h"
#include "vin/diagnostics/torchscript/legacy_archive.h"

namespace vin::diagnostics {
namespace {

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

// What each use wants, as a refusal names it
struct Wanted {
  Use use;
  std::string_view phrase;
};
constexpr Wanted kWanted[] = {
    {kDescribe, "a model file (an archive or a weights file)"},
    {kRun, "a TorchScript archive"},
    {kInputs, "an inputs file (.npz, .npy or torch.save data)"},
    {kConfig, "a configuration rendering (a YAML mapping)"},
    {kRecords, "saved records"},
    {kSavedTensors, "an .npz file of saved tensors"},
};

// "not A", "not A or B", ... of the uses wanted
std::string not_wanted(unsigned uses) {
  std::vector<std::string_view> phrases;
  for (const Wanted& w : kWanted)
    if (uses & w.use) phrases.push_back(w.phrase);
  std::string out = "not ";
  for (std::size_t i = 0; i < phrases.size(); ++i)
    out += std::string(i == 0 ? "" : i + 1 == phrases.size() ? " or " : ", ") +
           std::string(phrases[i]);
  return out;
}

// What the file is, as a refusal names it, with what to do instead ("" for nothing): the
// table's, told more precisely where the file says more (what kind of zip, which class)
std::pair<std::string, std::string> subject_and_hint(const ClassifiedFile& file) {
  const FileFormat& format = format_of(file.kind);
  switch (file.kind) {
    case FileKind::empty:
      return {"empty file", ""};
    case FileKind::other_zip:
      if (file.zip->entries().empty()) return {"an empty zip archive", ""};
      if (is_torch_package(*file.zip))
        return {"a torch.package archive (torch.package.PackageExporter), which only Python's "
                "torch.package.PackageImporter loads: it holds Python code and pickles",
                "export the model with torch.jit.save(torch.jit.script(model), path)"};
      return {"a zip archive without data.pkl", ""};
    case FileKind::torch_save_zip:
      if (const auto object_class = pickled_object_class(*file.zip))
        return {"a torch.save file holding a pickled Python object of class " +
                    printable(*object_class, 200) +
                    " (torch.save of a whole model), which only Python with that class's code "
                    "loads",
                "make an archive this tool reads with torch.jit.save(torch.jit.script(model), "
                "path) or torch.jit.trace"};
      return {"a torch.save file (tensors or a state dict)", std::string(format.hint)};
    case FileKind::records:
      if (saved_records_of(file))
        return {what_it_is(file), "diff compares saved records with a model"};
      return {what_it_is(file), ""};
    default:
      return {what_it_is(file), std::string(format.hint)};
  }
}

}  // namespace

std::string refusal(const ClassifiedFile& file, unsigned uses) {
  const auto [subject, hint] = subject_and_hint(file);
  // a Git LFS pointer's description says what to do (fetch the file): nothing to add
  if (file.kind == FileKind::lfs_pointer) return file.path() + ": " + subject;
  // a model of another kind (a .pt2, an old archive): why it is refused, not what it is not
  if (const FileFormat& format = format_of(file.kind); uses & format.which_for)
    return file.path() + ": " + subject + ", which " + std::string(format.which);
  // saved records given for a model are "not a model file": what they are is said already
  const bool records = saved_records_of(file).has_value() && !(uses & kConfig);
  std::string out = file.path() + ": " + subject + ", " +
                    (records ? std::string("not a model file") : not_wanted(uses));
  if (!hint.empty() && (uses & (kRun | kDescribe) || records)) out += "; " + hint;
  return out;
}

bool serves(const ClassifiedFile& file, unsigned uses) {
  if (file.kind == FileKind::records)  // saved records are diff's; other JSON is YAML
    return (uses & (saved_records_of(file) ? kRecords : kConfig)) != 0;
  return serves(file.kind, uses);
}

void refuse(const ClassifiedFile& file, unsigned uses) {
  // a .pt2 runs elsewhere: exit 1 even for compare, whose 1 otherwise says "different"
  if (file.kind == FileKind::torch_export && (uses & kRun) && !(uses & kRunProgram))
    throw NotRunnable(refusal(file, uses));
  throw Error(refusal(file, uses));
}

ClassifiedFile open_model_file(const std::string& path, unsigned uses, std::string_view what) {
  std::error_code ec;
  // a directory stands for the sharded set or the weights file it holds (a Hugging Face
  // checkpoint's folder)
  const std::string named = (uses & kDescribe) && std::filesystem::is_directory(path, ec)
                                ? model_file_in_directory(path)
                                : path;
  ClassifiedFile file = classify_file(named, what);
  if (!serves(file, uses)) refuse(file, uses);
  return file;
}

ArchiveLayout open_torchscript_archive(const ClassifiedFile& file) {
  if (file.kind != FileKind::torchscript_archive) refuse(file, kRun);
  return read_archive_layout(file.zip);
}

ArchiveLayout open_torchscript_archive(const std::string& path) {
  return open_torchscript_archive(open_model_file(path, kRun, "a TorchScript archive"));
}

std::unique_ptr<TorchSaveSource> open_torch_save(const ClassifiedFile& file,
                                                 std::uint64_t max_pickle_bytes) {
  switch (file.kind) {
    case FileKind::torch_save_zip:
    case FileKind::torchscript_archive:  // torch.save's reader says what it cannot rebuild
      return std::make_unique<TorchSaveZip>(*file.zip, file.path(), max_pickle_bytes);
    case FileKind::legacy_pickle:
      return std::make_unique<LegacyTorchSave>(file.file);
    case FileKind::torch_save_tar:
      return std::make_unique<TorchSaveTar>(file.file);
    default:
      refuse(file, kInputs);
  }
}

const ZipArchive* npz_of(const ClassifiedFile& file) {
  return file.kind == FileKind::other_zip ? file.zip.get() : nullptr;
}

bool is_npy(const ClassifiedFile& file) { return file.kind == FileKind::npy; }

bool is_export_program(const ClassifiedFile& file) { return file.kind == FileKind::torch_export; }

bool is_safetensors(const ClassifiedFile& file) { return file.kind == FileKind::safetensors; }

bool is_torch_save(const ClassifiedFile& file) {
  return file.kind == FileKind::torch_save_zip || file.kind == FileKind::legacy_pickle ||
         file.kind == FileKind::torch_save_tar;
}

ModelMetadata describe_model_file(const std::string& path, const InspectDetails& details,
                                  const LibTorchInspector& fallback) {
  // the zip directory read here: its allocations are the structure reader's too
  const ClassifiedFile file = naming_out_of_memory(path, "reading the archive's structure", [&] {
    return open_model_file(path, kDescribe, "a model file");
  });
  return describe_model_file(file, details, fallback);
}

ModelMetadata describe_model_file(const ClassifiedFile& file, const InspectDetails& details,
                                  const LibTorchInspector& fallback) {
  switch (format_of(file.kind).family) {
    case FormatFamily::weights:
      return describe_weights_file(file, details);
    case FormatFamily::export_program:
      return naming_out_of_memory(file.path(), "reading the archive", [&] {
        return read_export_archive(*file.zip, details, details.model);
      });
    case FormatFamily::torchscript:
      if (file.kind == FileKind::legacy_torchscript)
        return naming_out_of_memory(file.path(), "reading the archive's structure", [&] {
          return read_legacy_archive_metadata(*file.zip, file.zip->first_folder(), details);
        });
      return describe_model_file(open_torchscript_archive(file), details, fallback);
    default:
      refuse(file, kDescribe);
  }
}

ModelMetadata describe_model_file(const ArchiveLayout& archive, const InspectDetails& details,
                                  const LibTorchInspector& fallback) {
  const std::string& path = archive.path();
  std::string why_not;
  auto structure = naming_out_of_memory(path, "reading the archive's structure", [&] {
    return read_archive_metadata(archive, details, &why_not);
  });
  if (structure) return std::move(*structure);
  if (fallback) return fallback(archive, details, why_not);
  throw Error(path + ": cannot be described without running the archive's code (" + why_not +
              "); vin-inspect never does that on its own: " + kLoadWithLibTorchFlag +
              " reads it with LibTorch's loader, which runs the archive's TorchScript");
}

}  // namespace vin::diagnostics
