#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <string>

#include "fixtures.h"
#include "vin/diagnostics/formats/file_format.h"
#include "vin/diagnostics/formats/model_file.h"
#include "vin/diagnostics/records/error.h"

using namespace vin::diagnostics;

TEST_CASE("the format table: a row per kind, in its order, names and phrases each once") {
  REQUIRE(kFileFormatCount == static_cast<std::size_t>(FileKind::empty) + 1);
  std::set<std::string_view> names, phrases;
  for (std::size_t i = 0; i < kFileFormatCount; ++i) {
    const FileFormat& f = kFileFormats[i];
    CAPTURE(f.name);
    CHECK(static_cast<std::size_t>(f.kind) == i);  // format_of indexes by the enum
    CHECK(&format_of(f.kind) == &f);
    CHECK(names.insert(f.name).second);
    CHECK(phrases.insert(f.phrase).second);
    CHECK_FALSE(f.phrase.empty());
  }
  // the weights formats' names are WeightsFile.format's (contract 11.2)
  CHECK(format_of(FileKind::torch_save_zip).name == "torch_save_zip");
  CHECK(format_of(FileKind::legacy_pickle).name == "torch_save_legacy");
  CHECK(format_of(FileKind::torch_save_tar).name == "torch_save_tar");
  CHECK(format_of(FileKind::safetensors).name == "safetensors");
  CHECK(format_of(FileKind::weights_index).name == "sharded");
  for (FileKind kind : {FileKind::torch_save_zip, FileKind::legacy_pickle, FileKind::torch_save_tar,
                        FileKind::safetensors, FileKind::weights_index})
    CHECK(is_weights_kind(kind));
  CHECK_FALSE(is_weights_kind(FileKind::torchscript_archive));
}

TEST_CASE("what each command takes is the table's, and the help text lists it") {
  CHECK(serves(FileKind::torchscript_archive, kRun));
  CHECK(serves(FileKind::torchscript_archive, kDescribe | kConfig));
  CHECK_FALSE(serves(FileKind::torch_export, kRun));  // a .pt2 is described, not run
  CHECK(serves(FileKind::torch_export, kDescribe));
  CHECK(serves(FileKind::other_zip, kSavedTensors));
  CHECK_FALSE(serves(FileKind::safetensors, kInputs));
  CHECK_FALSE(serves(FileKind::empty, ~0u));
  CHECK(formats_serving(kRun) == "a TorchScript archive");
  const std::string describes = formats_serving(kDescribe);
  CHECK(describes.rfind("a TorchScript archive, a torch.save file, ", 0) == 0);
  CHECK(describes.find(" or a torch.save file of PyTorch 0.1 to 0.3 (tar)") != std::string::npos);
}

TEST_CASE("a file a command does not take is refused in the table's words") {
  const auto refused = [](const std::string& path, unsigned uses) -> std::string {
    try {
      open_model_file(path, uses, "a file");
    } catch (const Error& e) {
      return e.what();
    }
    return "";
  };
  const std::string text = fixture("text.pt"), empty = fixture("empty.pt");
  const std::string state_dict = fixture("state_dict.pt");
  CHECK(refused(text, kRun) == text + ": a text file, not a TorchScript archive; torch.jit.save "
                                      "writes zip archives");
  CHECK(refused(empty, kConfig) ==
        empty + ": empty file, not a configuration rendering (a YAML mapping)");
  CHECK(refused(state_dict, kRun | kSavedTensors) ==
        state_dict + ": a torch.save file (tensors or a state dict), not a TorchScript archive "
                     "or an .npz file of saved tensors; export the model with "
                     "torch.jit.save(torch.jit.script(model), path)");
  CHECK(refused(empty, kDescribe | kConfig | kRecords) ==
        empty + ": empty file, not a model file (an archive or a weights file), a configuration "
                "rendering (a YAML mapping) or saved records");
  // what a format serves is opened, whatever else was wanted
  CHECK(refused(state_dict, kDescribe | kRun).empty());
  CHECK(refused(fixture("convnet.pt"), kRun).empty());
  // a .pt2 is not run where only a TorchScript archive is read (kRun alone): NotRunnable (exit
  // 1); capture, compare and profile run it (kRunProgram)
  const std::string pt2 =
      std::string(VIN_SOURCE_DIR) + "/tests/fixtures/pt2/torch-2.6/cnn_eval.pt2";
  CHECK_THROWS_WITH_AS(open_model_file(pt2, kRun, "an archive"),
                       doctest::Contains("a torch.export archive (.pt2), which this reader of "
                                         "TorchScript archives does not run"),
                       NotRunnable);
  CHECK(is_export_program(open_model_file(pt2, kRun | kRunProgram, "an archive")));
}

TEST_CASE("saved records serve diff alone; other JSON is a rendering") {
  const std::filesystem::path folder = std::filesystem::temp_directory_path();
  const std::string records = (folder / "vin_file_format_records.jsonl").string();
  const std::string json = (folder / "vin_file_format_plain.json").string();
  std::ofstream(records) << "{\"record\": \"ModelMetadata\", \"model_type\": \"Net\"}\n";
  std::ofstream(json) << "{\"lr\": 0.1}\n";
  const ClassifiedFile saved = classify_file(records);
  const ClassifiedFile plain = classify_file(json);
  CHECK(serves(saved, kRecords));
  CHECK_FALSE(serves(saved, kConfig));
  CHECK(serves(plain, kConfig));
  CHECK_FALSE(serves(plain, kRecords));
  CHECK(refusal(saved, kRun) == records + ": saved records (jsonl, as inspect-model writes), not "
                                          "a model file; diff compares saved records with a "
                                          "model");
  std::filesystem::remove(records);
  std::filesystem::remove(json);
}
