#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "vin/diagnostics/weights/state_dict_model.h"
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
  t.storage = t.identity;  // a tensor of its own storage (views set theirs)
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

TEST_CASE("a safetensors file's model: every prefix a module, each tensor once in the totals") {
  InspectDetails details;
  details.tensors = true;
  const std::vector<StateDictTensor> tensors = {
      state_tensor("layers.10.weight", {2, 3}), state_tensor("layers.2.weight", {4}),
      state_tensor("embed.weight", {5, 2}, "storage-1"),
      state_tensor("head.weight", {5, 2}, "storage-1"),  // tied to embed.weight
      state_tensor("scale", {})};
  WeightsFile weights;
  weights.format = "safetensors";
  const ModelMetadata model =
      model_of_state_dict("sd.pt", tensors, weights, details, ModuleOrder::sorted_names);
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
  const ModelMetadata counts = model_of_state_dict("sd.pt", tensors, weights, InspectDetails{},
                                                   ModuleOrder::sorted_names);
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
                                           WeightsFile{}, InspectDetails{},
                                           ModuleOrder::first_key),
                       doctest::Contains("deep.safetensors: its module paths add up to more"),
                       Error);
}

TEST_CASE("a torch.save file's modules come in named_modules() order: where its keys name them") {
  // registration order, as state_dict() writes it: head, enc (and its children), blocks
  // 0-11, fc1, bn; a later key of an earlier module (enc.1) keeps it where it first came
  std::vector<StateDictTensor> tensors = {state_tensor("scale", {2}),
                                          state_tensor("head.weight", {2}),
                                          state_tensor("enc.0.weight", {2}),
                                          state_tensor("enc.1.weight", {2})};
  for (int i = 0; i < 12; ++i) tensors.push_back(state_tensor("blocks." + std::to_string(i) + ".w", {1}));
  tensors.push_back(state_tensor("fc1.weight", {2}));
  tensors.push_back(state_tensor("enc.2.deep.weight", {2}));  // out of its parent's run
  tensors.push_back(state_tensor("bn.weight", {2}));
  const ModelMetadata model = model_of_state_dict("sd.pt", tensors, WeightsFile{}, InspectDetails{},
                                                  ModuleOrder::first_key);
  std::vector<std::string> expected = {"<root>", "head", "enc", "enc.0", "enc.1", "enc.2",
                                       "enc.2.deep", "blocks"};
  for (int i = 0; i < 12; ++i) expected.push_back("blocks." + std::to_string(i));
  expected.insert(expected.end(), {"fc1", "bn"});
  CHECK(paths_of(model) == expected);
  // the same keys sorted as a safetensors file sorts them: numeric segments by value
  const ModelMetadata sorted = model_of_state_dict("sd.safetensors", tensors, WeightsFile{},
                                                   InspectDetails{}, ModuleOrder::sorted_names);
  CHECK(paths_of(sorted)[1] == "blocks");
  CHECK(paths_of(sorted)[3] == "blocks.1");
  CHECK(paths_of(sorted)[11] == "blocks.9");
  CHECK(paths_of(sorted)[12] == "blocks.10");
}

TEST_CASE("views of one storage list each other; a checkpoint's other tensors come after") {
  InspectDetails details;
  details.tensors = true;
  // whole (3, 4), its row 1 and its column 2: one storage, three tensors, counted apart
  std::vector<StateDictTensor> tensors = {state_tensor("whole", {3, 4}, "s0@0:3,4"),
                                          state_tensor("row", {4}, "s0@4:4"),
                                          state_tensor("col", {3}, "s0@2:3"),
                                          state_tensor("opt.m", {2}, "s1@0:2")};
  for (auto& t : tensors) t.storage = t.identity.substr(0, 2);
  tensors[3].in_state_dict = false;  // an optimizer's state
  tensors[3].dict_key.clear();
  const ModelMetadata model =
      model_of_state_dict("ckpt.pt", tensors, WeightsFile{}, details, ModuleOrder::first_key);
  CHECK(model.total_parameters() == 12 + 4 + 3);
  REQUIRE(model.modules().size() == 1);
  const auto& listed = *model.modules()[0].details().tensors;
  REQUIRE(listed.size() == 3);
  CHECK(listed[0].shared_with == std::vector<std::string>{"row", "col"});
  CHECK(listed[1].shared_with == std::vector<std::string>{"whole", "col"});
  CHECK(listed[2].shared_with == std::vector<std::string>{"whole", "row"});
  const auto& outside = model.details().checkpoint_tensors;
  REQUIRE(outside.size() == 1);
  CHECK(outside[0].kind == "checkpoint");
  CHECK(outside[0].name == "opt.m");
  CHECK(outside[0].shared_with.empty());
}
