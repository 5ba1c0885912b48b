#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "vin/diagnostics/archive/state_dict_model.h"
#include "vin/diagnostics/records/error.h"

using namespace vin::diagnostics;

namespace {

StateDictTensor state_tensor(const std::string& key, std::vector<std::int64_t> shape,
                             std::string identity = "") {
  StateDictTensor t;
  t.key = t.dict_key = key;
  t.dtype = dtype_named("float32");
  t.shape = std::move(shape);
  t.numel = 1;
  for (const std::int64_t n : t.shape) t.numel *= n;
  t.nbytes = 4 * t.numel;
  t.identity = std::move(identity);
  t.data_crc32 = "00000000";
  return t;
}

std::vector<std::string> paths_of(const ModelMetadata& model) {
  std::vector<std::string> out;
  for (const auto& m : model.modules()) out.push_back(m.path());
  return out;
}

}  // namespace

TEST_CASE("a state dict key names its module and tensor; modules come in path order") {
  CHECK(module_and_name("w") == std::pair<std::string, std::string>{"<root>", "w"});
  CHECK(module_and_name("a.b.w") == std::pair<std::string, std::string>{"a.b", "w"});
  CHECK(module_and_name("a..w") == std::pair<std::string, std::string>{"<root>", "a..w"});
  CHECK(module_and_name(".w") == std::pair<std::string, std::string>{"<root>", ".w"});
  CHECK(module_and_name("a.") == std::pair<std::string, std::string>{"a", ""});
  CHECK(module_path_before("<root>", "a"));
  CHECK_FALSE(module_path_before("a", "<root>"));
  CHECK(module_path_before("layers.2", "layers.10"));
  CHECK(module_path_before("layers.9", "layers.10.conv"));
  CHECK(module_path_before("10", "a"));  // numeric segments first
  CHECK(module_path_before("a", "a.b"));  // a module before its submodules
  CHECK(module_path_before("a.z", "b"));
  CHECK(module_path_before("99999999999999999999999", "100000000000000000000000"));
  CHECK_FALSE(module_path_before("a", "a"));
}

TEST_CASE("a state dict's model: every prefix a module, each tensor once in the totals") {
  InspectDetails details;
  details.tensors = true;
  const std::vector<StateDictTensor> tensors = {
      state_tensor("layers.10.weight", {2, 3}), state_tensor("layers.2.weight", {4}),
      state_tensor("embed.weight", {5, 2}, "storage-1"),
      state_tensor("head.weight", {5, 2}, "storage-1"),  // tied to embed.weight
      state_tensor("scale", {})};
  WeightsFile weights;
  weights.format = "safetensors";
  const ModelMetadata model = model_of_state_dict("sd.pt", tensors, weights, details);
  CHECK(paths_of(model) == std::vector<std::string>{"<root>", "embed", "head", "layers",
                                                    "layers.2", "layers.10"});
  CHECK(model.total_parameters() == 6 + 4 + 10 + 1);  // the tied tensor once
  CHECK_FALSE(model.trainable_parameters());
  CHECK(*model.details().parameter_bytes == 4 * 21);
  CHECK_FALSE(model.details().buffer_bytes);
  const WeightsFile& said = *model.details().weights_file;
  CHECK(said.dtypes == std::vector<std::pair<std::string, std::int64_t>>{{"torch.float32", 21}});
  const ModuleMetadata& root = model.modules()[0];
  CHECK(root.direct_parameters() == 1);
  CHECK(root.details().tensors->at(0).name == "scale");
  const ModuleMetadata& head = model.modules()[2];
  CHECK(head.direct_parameters() == 10);  // a tied tensor counts on each module that holds it
  CHECK_FALSE(head.module_type());
  CHECK_FALSE(head.trainable_parameters());
  CHECK_FALSE(head.direct_buffers());
  CHECK_FALSE(head.training());
  const TensorMetadata& tied = head.details().tensors->at(0);
  CHECK(tied.key == "head.weight");
  CHECK(tied.shared_with == std::vector<std::string>{"embed.weight"});
  CHECK_FALSE(tied.device);
  CHECK_FALSE(tied.requires_grad);
  CHECK(tied.kind == "parameter");
  CHECK(model.modules()[3].direct_parameters() == 0);  // layers: a prefix only

  // without --tensors: the counts alone
  const ModelMetadata counts = model_of_state_dict("sd.pt", tensors, weights, InspectDetails{});
  CHECK_FALSE(counts.modules()[2].details().tensors);
  CHECK_FALSE(counts.details().parameter_bytes);
  CHECK(counts.total_parameters() == 21);
}

TEST_CASE("a state dict's module paths are bounded") {
  // one key of 3,000,000 one-letter segments: 3,000,000 modules whose paths add up to terabytes
  std::string key;
  for (int i = 0; i < 3'000'000; ++i) key += "a.";
  key += "w";
  CHECK_THROWS_WITH_AS(model_of_state_dict("deep.safetensors", {state_tensor(key, {1})},
                                           WeightsFile{}, InspectDetails{}),
                       doctest::Contains("deep.safetensors: its module paths add up to more"),
                       Error);
}
