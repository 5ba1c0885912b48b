#include <doctest/doctest.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>

#include "fixtures.h"
#include "vin/diagnostics/container/input_file.h"
#include "vin/diagnostics/container/zip_archive.h"
#include "vin/diagnostics/records/error.h"
#include "vin/diagnostics/torch_save/torch_save_file.h"
#include "vin/diagnostics/weights/weights_file.h"

using namespace vin::diagnostics;

namespace {

// A safetensors file of `header` (JSON) and `data`, as the format's specification lays it out
std::string safetensors_file(const std::string& name, const std::string& header,
                             const std::string& data) {
  const std::string path = (std::filesystem::temp_directory_path() / name).string();
  std::string bytes(8, '\0');
  std::uint64_t length = header.size();
  for (int i = 0; i < 8; ++i) bytes[i] = static_cast<char>(length >> (8 * i) & 0xFF);
  std::ofstream(path, std::ios::binary) << bytes << header << data;
  return path;
}

}  // namespace

TEST_CASE("a safetensors file's tensors: by key, elements' CRC, names sorted as text") {
  // two float32 tensors; the writer sorts its names (blocks.10 before blocks.2 as text)
  std::string data(24, '\0');
  const float values[] = {1, 2, 3, 4, 5, 6};
  std::memcpy(data.data(), values, sizeof values);
  const std::string path = safetensors_file(
      "vin_weights_file.safetensors",
      R"({"blocks.10.w": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]},)"
      R"( "blocks.2.w": {"dtype": "F32", "shape": [4], "data_offsets": [8, 24]}})",
      data);
  InspectDetails details;
  details.tensors = true;
  WeightsContent content = safetensors_content(*InputFile::open(path), details);
  REQUIRE(content.tensors.size() == 2);
  CHECK(content.order == ModuleOrder::sorted_names);
  CHECK(content.tensors[0].key == "blocks.10.w");
  CHECK(content.tensors[0].numel == 2);
  CHECK(*content.tensors[0].data_crc32 == "2e3fa576");  // zlib.crc32 of the floats 1.0, 2.0
  CHECK_FALSE(content.tensors[0].device);               // safetensors does not say
  content.weights.format = "safetensors";
  const ModelMetadata model = model_of_weights(path, std::move(content), details);
  // numeric segments in numeric order: blocks, blocks.2, blocks.10
  REQUIRE(model.modules().size() == 4);
  CHECK(model.modules()[2].path() == "blocks.2");
  CHECK(model.modules()[3].path() == "blocks.10");
  CHECK(model.total_parameters() == 6);
  std::filesystem::remove(path);
}

TEST_CASE("a torch.save file's tensors and the order of its keys") {
  const auto zip = std::make_shared<const ZipArchive>(InputFile::open(fixture("state_dict.pt")));
  InspectDetails details;
  details.tensors = true;
  const TorchSaveZip saved(*zip, zip->path(), std::uint64_t{1} << 24);
  const WeightsContent content = torch_save_content(saved, details);
  CHECK(content.order == ModuleOrder::first_key);
  REQUIRE_FALSE(content.tensors.empty());
  for (const StateDictTensor& t : content.tensors) {
    CAPTURE(t.key);
    CHECK(t.in_state_dict);
    CHECK(t.device == std::optional<std::string>("cpu"));
    CHECK(t.storage_crc32);  // the zip member's
    CHECK(t.data_crc32);
    CHECK_FALSE(t.storage.empty());
  }
  const ModelMetadata model = describe_torch_save(saved, "torch_save_zip", details);
  CHECK(model.details().weights_file->format == "torch_save_zip");
  CHECK(model.modules()[0].path() == "<root>");
}
