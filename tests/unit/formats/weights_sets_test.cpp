#include <doctest/doctest.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>

#include "vin/diagnostics/formats/file_kind.h"
#include "vin/diagnostics/formats/weights_sets.h"
#include "vin/diagnostics/records/error.h"

using namespace vin::diagnostics;
namespace fs = std::filesystem;

namespace {

void write_safetensors(const fs::path& path, const std::string& header, std::size_t bytes) {
  std::string out(8, '\0');
  for (int i = 0; i < 8; ++i) out[i] = static_cast<char>(header.size() >> (8 * i) & 0xFF);
  std::ofstream(path, std::ios::binary) << out << header << std::string(bytes, '\0');
}

// a set of two safetensors shards and its index, in a folder of its own
fs::path sharded_set(const std::string& name, const std::string& total_size) {
  const fs::path folder = fs::temp_directory_path() / name;
  fs::remove_all(folder);
  fs::create_directories(folder);
  write_safetensors(folder / "model-1.safetensors",
                    R"({"enc.w": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]}})", 8);
  write_safetensors(folder / "model-2.safetensors",
                    R"({"head.w": {"dtype": "F32", "shape": [3], "data_offsets": [0, 12]}})", 12);
  std::ofstream(folder / "model.safetensors.index.json")
      << R"({"metadata": {"total_size": )" << total_size
      << R"(}, "weight_map": {"enc.w": "model-1.safetensors", "head.w": "model-2.safetensors"}})";
  return folder;
}

}  // namespace

TEST_CASE("a sharded set by its index and by its directory: every shard read, files named") {
  const fs::path folder = sharded_set("vin_sharded_set", "20");
  const std::string index = (folder / "model.safetensors.index.json").string();
  CHECK(model_file_in_directory(folder.string()) == index);
  InspectDetails details;
  details.tensors = true;
  const ModelMetadata model = describe_weights_file(classify_file(index), details);
  const WeightsFile& weights = *model.details().weights_file;
  CHECK(weights.format == "sharded");
  CHECK(weights.files == std::vector<std::string>{"model-1.safetensors", "model-2.safetensors"});
  CHECK(model.total_parameters() == 5);
  REQUIRE(model.modules().size() == 3);  // <root>, enc, head: safetensors names sort as text
  CHECK(*model.modules()[1].details().tensors->at(0).file == "model-1.safetensors");
  fs::remove_all(folder);
}

TEST_CASE("a sharded set whose index does not add up is refused, naming the index") {
  const fs::path folder = sharded_set("vin_sharded_wrong", "21");
  const std::string index = (folder / "model.safetensors.index.json").string();
  CHECK_THROWS_WITH_AS(describe_weights_file(classify_file(index), InspectDetails{}),
                       doctest::Contains("its total_size says 21 bytes, but its shards' tensors "
                                         "hold 20"),
                       Error);
  fs::remove(folder / "model-2.safetensors");
  CHECK_THROWS_WITH_AS(describe_weights_file(classify_file(index), InspectDetails{}),
                       doctest::Contains("names the shard model-2.safetensors, which is missing"),
                       Error);
  fs::remove_all(folder);
}
