#include <torch/script.h>
#include <torch/version.h>

#include <map>
#include <vector>

#include "fixtures.h"
#include "records_printing.h"
#include "vin/diagnostics/records/error.h"
#include "vin/diagnostics/torch/inspect_model.h"
#include "vin/diagnostics/torch/model_loader.h"

#include "doctest_after_torch.h"  // last: after glog's CHECK macros

using namespace vin::diagnostics;

namespace {

using M = ModuleMetadata;

// Everything inspect_model promises to leave alone (docs/records.md), in a comparable form.
struct ModuleState {
  std::vector<std::pair<std::string, bool>> training;
  std::vector<const c10::TensorImpl*> tensor_identity;
  std::vector<bool> requires_grad;
  std::vector<at::Tensor> values;
  std::vector<std::string> devices;
  std::string graph;

  static ModuleState of(const torch::jit::Module& m) {
    ModuleState s;
    for (const auto& sub : m.named_modules())
      s.training.emplace_back(sub.name, sub.value.is_training());
    auto record = [&s](const at::Tensor& t) {
      s.tensor_identity.push_back(t.unsafeGetTensorImpl());
      s.requires_grad.push_back(t.requires_grad());
      s.values.push_back(t.detach().clone());
      s.devices.push_back(t.device().str());
    };
    for (const auto& p : m.named_parameters()) record(p.value);
    for (const auto& b : m.named_buffers()) record(b.value);
    s.graph = m.get_method("forward").graph()->toString();
    return s;
  }

  bool same_as(const ModuleState& o) const {
    if (training != o.training || tensor_identity != o.tensor_identity ||
        requires_grad != o.requires_grad || devices != o.devices || graph != o.graph ||
        values.size() != o.values.size())
      return false;
    for (size_t i = 0; i < values.size(); ++i)
      if (!values[i].equal(o.values[i])) return false;
    return true;
  }
};

std::string load_error(const std::string& file, const std::string& device = "cpu") {
  try {
    load_torchscript_archive(file, device);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("every counting rule on one scripted model") {
  const ModelMetadata expected(
      "fixture_models.Everything", 209, 183,
      {
          M("<root>", "fixture_models.Everything", 0, 0, 7, true),  // steps 3 + mask 4, not table
          M("encoder", "fixture_models.Encoder", 0, 0, 0, false),
          M("encoder.conv", "torch.nn.modules.conv.Conv1d", 28, 28, 0, false),
          M("encoder.norm", "torch.nn.modules.batchnorm.BatchNorm1d", 8, 8, 9, false),
          M("encoder.block", "fixture_models.Block", 0, 0, 0, false),
          M("encoder.block.lin", "torch.nn.modules.linear.Linear", 20, 20, 0, false),
          M("encoder.block.act", "torch.nn.modules.activation.ReLU", 0, 0, 0, false),
          M("layers", "torch.nn.modules.container.ModuleList", 0, 0, 0, true),
          M("layers.0", "torch.nn.modules.linear.Linear", 20, 20, 0, true),
          M("layers.1", "torch.nn.modules.linear.Linear", 16, 16, 0, true),  // bias=None
          M("seq", "torch.nn.modules.container.Sequential", 0, 0, 0, true),
          M("seq.0", "torch.nn.modules.linear.Linear", 15, 15, 0, true),
          M("seq.1", "torch.nn.modules.activation.Tanh", 0, 0, 0, true),
          M("seq.2", "torch.nn.modules.linear.Linear", 12, 12, 0, true),
          M("embed", "torch.nn.modules.sparse.Embedding", 40, 40, 0, true),
          M("decoder", "torch.nn.modules.linear.Linear", 40, 40, 0, true),  // tied to embed
          M("shared", "fixture_models.Block", 0, 0, 0, true),
          M("shared.lin", "torch.nn.modules.linear.Linear", 20, 20, 0, true),
          M("shared.act", "torch.nn.modules.activation.ReLU", 0, 0, 0, true),
          M("alias", "fixture_models.Block", 0, 0, 0, true),  // a second object, same tensors
          M("alias.lin", "torch.nn.modules.linear.Linear", 20, 20, 0, true),
          M("alias.act", "torch.nn.modules.activation.ReLU", 0, 0, 0, true),
          M("head", "torch.nn.modules.linear.Linear", 10, 0, 0, false),    // frozen
          M("partial", "torch.nn.modules.linear.Linear", 20, 4, 0, true),  // weight frozen
      });
  const auto module = load_torchscript_archive(fixture("everything.pt"));
  const ModelMetadata got = inspect_model(module);
  REQUIRE(got.modules().size() == expected.modules().size());
  for (size_t i = 0; i < expected.modules().size(); ++i) {
    CAPTURE(expected.modules()[i].path());
    CHECK(got.modules()[i] == expected.modules()[i]);
  }
  CHECK(got == expected);
  CHECK(inspect_model(module) == got);  // repeatable
}

TEST_CASE("inspection leaves the module exactly as it was") {
  for (const char* name : {"everything.pt", "dict_model.pt", "convnet.pt"}) {
    CAPTURE(name);
    const auto module = load_torchscript_archive(fixture(name));
    const ModuleState before = ModuleState::of(module);
    (void)inspect_model(module);
    CHECK(ModuleState::of(module).same_as(before));
  }
}

TEST_CASE("ModuleDict, GRU parameters and a LayerNorm without affine parameters") {
  const ModelMetadata got = describe_with_libtorch(fixture("dict_model.pt"));
  // GRU(4, 4): weight_ih 12x4, weight_hh 12x4, bias_ih 12, bias_hh 12
  const ModelMetadata expected(
      "fixture_models.DictModel", 15 + 16 + 120, 15 + 16 + 120,
      {M("<root>", "fixture_models.DictModel", 0, 0, 0, false),
       M("heads", "torch.nn.modules.container.ModuleDict", 0, 0, 0, false),
       M("heads.cls", "torch.nn.modules.linear.Linear", 15, 15, 0, false),
       M("heads.box", "torch.nn.modules.linear.Linear", 16, 16, 0, false),
       M("gru", "torch.nn.modules.rnn.GRU", 120, 120, 0, false),
       M("ln", "torch.nn.modules.normalization.LayerNorm", 0, 0, 0, false)});
  CHECK(got == expected);
}

TEST_CASE("a model of 5,054 modules and one 40 deep") {
  const ModelMetadata wide = describe_with_libtorch(fixture("wide.pt"));
  CHECK(wide.modules().size() == 2 + 3 * 1684);
  CHECK(wide.total_parameters() == 6 * 1684);  // Linear(2, 2) per block
  CHECK(wide.modules().back().path() == "blocks.1683.act");
  const ModelMetadata deep = describe_with_libtorch(fixture("deep.pt"));
  CHECK(deep.modules().size() == 1 + 2 * 40);  // a Deep and a Linear per level, then a Leaf
  CHECK(deep.modules().back().module_type().value_or("") == "fixture_models.Leaf");
  CHECK(deep.total_parameters() == 20 * 40);
}

TEST_CASE("rules that scripted Python cannot produce, on a module built in C++") {
  torch::jit::Module child("__torch__.pkg.___torch_mangle_7.Child");
  child.register_parameter("w", torch::ones({2, 3}).requires_grad_(), /*is_buffer=*/false);
  child.register_buffer("running", torch::zeros({4}));
  torch::jit::Module root("__torch__.pkg.Root");
  root.register_module("a", child);
  root.register_module("b", child);  // the same object at a second path: listed once
  root.register_attribute("maybe", c10::NoneType::get(), c10::IValue(), /*is_param=*/true);
  root.register_attribute("table", c10::TensorType::get(), torch::ones({6}));  // not a buffer
  root.register_parameter("frozen", torch::ones({5}), false);
  root.register_parameter("tied", root.attr("frozen").toTensor(), false);  // one tensor, 2 slots
  root.eval();
  root.attr("frozen").toTensor().requires_grad_(false);

  const ModelMetadata got = inspect_model(root);
  const ModelMetadata expected(
      "pkg.Root", 5 + 6, 6,
      {M("<root>", "pkg.Root", 10, 0, 0, false), M("a", "pkg.Child", 6, 6, 4, false)});
  CHECK(got == expected);
}

TEST_CASE("loading: wrong files, newer archives and bad devices are clear errors") {
  CHECK(load_error(fixture("newer_version.pt")) ==
        fixture("newer_version.pt") +
            ": archive file format version 99 is newer than LibTorch " TORCH_VERSION
            " can read (at most 10); it was written by a newer PyTorch");
  CHECK(load_error(fixture("state_dict.pt")).find(": a torch.save file") != std::string::npos);
  CHECK(load_error(fixture("truncated.pt")).find(": truncated or damaged zip") !=
        std::string::npos);
  CHECK_THROWS_AS(load_torchscript_archive(fixture("everything.pt"), "gpu:banana"), UsageError);
  CHECK(load_error(fixture("everything.pt")).empty());
}

TEST_CASE("LibTorch errors are reduced to their first line, without a backtrace") {
  try {
    TORCH_CHECK(false, "first line\nsecond line");
  } catch (const c10::Error& e) {
    CHECK(std::string(e.what()).find("Exception raised from") != std::string::npos);
    CHECK(describe_torch_error(e) == "first line");
  }
  CHECK(describe_torch_error(std::runtime_error("  \n plain: ")) == "plain");
}

TEST_CASE("an unknown operator is named, with what to do about it") {
  // LibTorch 1.13's words for an archive of torch 2.x that calls an operator it lacks
  CHECK(unknown_operator("Unknown builtin op: aten::scaled_dot_product_attention.") ==
        "aten::scaled_dot_product_attention");
  CHECK(unknown_operator("Unknown builtin op: torchvision::nms.\nHere are some suggestions") ==
        "torchvision::nms");
  CHECK_FALSE(unknown_operator("Unknown builtin op: nonsense").has_value());
  CHECK_FALSE(unknown_operator("expected a value of type Tensor").has_value());
  const std::string newer = unknown_operator_message("aten::scaled_dot_product_attention");
  CHECK(newer.find("aten::scaled_dot_product_attention") != std::string::npos);
  CHECK(newer.find("newer PyTorch") != std::string::npos);
  const std::string extension = unknown_operator_message("torchvision::nms");
  CHECK(extension.find("namespace torchvision") != std::string::npos);
  CHECK(extension.find("newer PyTorch") == std::string::npos);
}
