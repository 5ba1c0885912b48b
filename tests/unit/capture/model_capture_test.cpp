#include <torch/script.h>

#include <string>
#include <vector>

#include "fixtures.h"
#include "vin/diagnostics/capture/model_capture.h"
#include "vin/diagnostics/records/error.h"
#include "vin/diagnostics/json/json_encoding.h"
#include "vin/diagnostics/torch/model_loader.h"

#include "doctest_after_torch.h"  // last: after glog's CHECK macros

using namespace vin::diagnostics;

namespace {

// A module whose methods are TorchScript source, with submodules registered in order. (Source
// compiled from C++ calls a submodule as `self.sub.forward(x)`: the same prim::CallMethod that
// `self.sub(x)` becomes in an archive; dtypes are their ScalarType numbers.)
torch::jit::Module scripted(
    const std::string& name, const std::string& source,
    const std::vector<std::pair<std::string, torch::jit::Module>>& children = {}) {
  torch::jit::Module m("__torch__.test." + name);
  for (const auto& [child_name, child] : children) m.register_module(child_name, child);
  m.define(source);
  return m;
}

torch::jit::Module relu_module() {
  return scripted("Act", "def forward(self, x):\n  return torch.relu(x)\n");
}

// <root> calls act twice and returns act(x) + act(-x).
torch::jit::Module twice_model() {
  return scripted("Twice",
                  "def forward(self, x):\n"
                  "  return self.act.forward(x) + self.act.forward(x * -1.0)\n",
                  {{"act", relu_module()}});
}

ForwardInputs positional(std::vector<c10::IValue> args) {
  return ForwardInputs{std::move(args), {}};
}

// "module_path call direction tensor_path" for each snapshot, for compact expectations.
std::vector<std::string> trace(const ModelCapture& capture) {
  std::vector<std::string> out;
  for (const auto& s : capture.snapshots()) {
    std::string line =
        s.module_path() + " " + std::to_string(s.call_index()) + " " + to_string(s.direction());
    for (const auto& p : s.tensor_path()) line += " " + p;
    out.push_back(line);
  }
  return out;
}

const at::Tensor kInput = at::tensor({0.5f, -1.0f, 2.0f, -0.25f, 0.75f, -1.5f}).reshape({2, 3});

// What capture promises the caller's module keeps (docs/capture.md), in a comparable form.
std::string module_state(const torch::jit::Module& m) {
  std::ostringstream out;
  for (const auto& sub : m.named_modules()) {
    out << sub.name << " " << sub.value.is_training() << " "
        << sub.value.type()->name()->qualifiedName() << "\n";
    for (const auto* fn : sub.value.type()->methods())
      out << toGraphFunction(*fn).graph()->toString() << "\n";
  }
  for (const auto& p : m.named_parameters())
    out << p.name << " " << p.value.unsafeGetTensorImpl() << " " << p.value.requires_grad() << " "
        << p.value.sum().item<double>() << "\n";
  for (const auto& b : m.named_buffers())
    out << b.name << " " << b.value.unsafeGetTensorImpl() << " " << b.value.sum().item<double>()
        << "\n";
  return out.str();
}

}  // namespace

TEST_CASE("inputs and outputs of every invocation, call indices shared by both sides") {
  auto capture = capture_model(twice_model());
  {
    auto scope = capture.enter();
    capture.forward(positional({kInput}));
  }
  CHECK(trace(capture) == std::vector<std::string>{"<root> 0 input args 0", "act 0 input args 0",
                                                   "act 0 output output", "act 1 input args 0",
                                                   "act 1 output output",
                                                   "<root> 0 output output"});
  const TensorSnapshot& first_act_out = capture.snapshots()[2];
  CHECK(first_act_out.shape() == std::vector<std::int64_t>{2, 3});
  CHECK(first_act_out.dtype() == "torch.float32");
  CHECK(first_act_out.device() == "cpu");
  CHECK(first_act_out.numel() == 6);
  CHECK(first_act_out.sampled_bytes() == 24);
  CHECK(dump_line(to_json(first_act_out)).find("\"values\": [0.5, 0.0, 2.0, 0.0, 0.75, 0.0]") !=
        std::string::npos);
  CHECK(capture.summary().snapshots == 6);
  CHECK(capture.sampled_bytes() == 6 * 24);
  CHECK(capture.stopped_by() == std::nullopt);
}

TEST_CASE("the capture is a reusable scope; totals and call indices are cumulative") {
  auto capture = capture_model(twice_model(), std::vector<std::string>{"act"});
  CHECK(!capture.active());
  capture.forward(positional({kInput}));  // not active: nothing recorded
  CHECK(capture.snapshots().empty());
  {
    auto scope = capture.enter();
    CHECK(capture.active());
    CHECK_THROWS_AS((void)capture.enter(), UsageError);  // (GCC 14: the Scope is [[nodiscard]])
    capture.forward(positional({kInput}));
  }
  CHECK(!capture.active());
  {
    auto scope = capture.enter();
    capture.forward(positional({kInput}));
    capture.close();
    capture.close();  // idempotent, and the scope's own close after it is harmless
    CHECK(!capture.active());
  }
  CHECK(trace(capture) == std::vector<std::string>{"act 0 input args 0", "act 0 output output",
                                                   "act 1 input args 0", "act 1 output output",
                                                   "act 2 input args 0", "act 2 output output",
                                                   "act 3 input args 0", "act 3 output output"});
}

TEST_CASE("snapshots staged during a forward: counted before they are made, fields kept past the "
          "pools reserved for them") {
  // two snapshots reserve room for 8 tensor-path keys and 12 dimensions: the output's 7 keys and
  // 12 dimensions (with the input's 2 and 2) grow the pools while the forward runs
  auto capture = capture_model(
      scripted("Deep",
               "def forward(self, x):\n"
               "  return ((((((x.reshape([1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 3]),),),),),),)\n"),
      std::nullopt, CaptureLimits().with_max_tensors(2));
  {
    auto scope = capture.enter();
    capture.forward(positional({kInput}));
    CHECK(capture.snapshot_count() == 2);
    CHECK(capture.summary().snapshots == 2);
  }
  CHECK(trace(capture) == std::vector<std::string>{"<root> 0 input args 0",
                                                   "<root> 0 output output 0 0 0 0 0 0"});
  const auto& snapshots = capture.snapshots();
  REQUIRE(snapshots.size() == 2);
  CHECK(snapshots[0].shape() == std::vector<std::int64_t>{2, 3});
  CHECK(snapshots[1].shape() == std::vector<std::int64_t>{1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 3});
  const std::vector<SampleValue> values{0.5, -1.0, 2.0, -0.25, 0.75, -1.5};
  for (const auto& snapshot : snapshots) {
    CHECK((snapshot.values() == values));  // (no operator<< for a variant: not decomposed)
    CHECK(snapshot.dtype() == "torch.float32");
    CHECK(snapshot.device() == "cpu");
    CHECK(snapshot.numel() == 6);
    CHECK(snapshot.sampled_bytes() == 24);
  }
  CHECK(capture.stopped_by() == "max_tensors");
}

TEST_CASE("unknown module paths are rejected when the scope is entered, with suggestions") {
  auto capture = capture_model(twice_model(), std::vector<std::string>{"<root>", "axt"});
  try {
    auto scope = capture.enter();
    FAIL("enter() accepted an unknown path");
  } catch (const UsageError& e) {
    CHECK(std::string(e.what()) ==
          "--module 'axt': unknown module path; closest registered paths: 'act'");
  }
  CHECK(!capture.active());
}

TEST_CASE("max_tensors stops recording for good and says so") {
  auto capture = capture_model(twice_model(), std::nullopt, CaptureLimits().with_max_tensors(3));
  auto scope = capture.enter();
  capture.forward(positional({kInput}));
  capture.forward(positional({kInput}));
  CHECK(capture.snapshots().size() == 3);
  CHECK(capture.stopped_by() == "max_tensors");
  CHECK(capture.summary().stopped_by == "max_tensors");
}

TEST_CASE("max_bytes: a sample is cut to the bytes left, then recording stops") {
  auto capture = capture_model(twice_model(), std::nullopt, CaptureLimits().with_max_bytes(40));
  auto scope = capture.enter();
  capture.forward(positional({kInput}));
  REQUIRE(capture.snapshots().size() == 2);
  CHECK(capture.snapshots()[1].values().size() == 4);
  CHECK(capture.snapshots()[1].sampled_bytes() == 16);
  CHECK(capture.sampled_bytes() == 40);
  CHECK(capture.stopped_by() == "max_bytes");
}

TEST_CASE("max_bytes: fewer bytes left than one element still records, and recording goes on") {
  auto capture = capture_model(twice_model(), std::nullopt, CaptureLimits().with_max_bytes(26));
  auto scope = capture.enter();
  capture.forward(positional({kInput}));
  REQUIRE(capture.snapshots().size() == 6);
  CHECK(capture.snapshots()[0].sampled_bytes() == 24);
  for (std::size_t i = 1; i < 6; ++i) {
    CHECK(capture.snapshots()[i].values().empty());
    CHECK(capture.snapshots()[i].sampled_bytes() == 0);
    CHECK(capture.snapshots()[i].numel() == 6);
  }
  CHECK(capture.stopped_by() == std::nullopt);
}

TEST_CASE("when one snapshot reaches both quotas, max_tensors is reported") {
  auto capture = capture_model(twice_model(), std::nullopt,
                               CaptureLimits().with_max_tensors(1).with_max_bytes(24));
  auto scope = capture.enter();
  capture.forward(positional({kInput}));
  CHECK(capture.snapshots().size() == 1);
  CHECK(capture.stopped_by() == "max_tensors");
}

TEST_CASE("max_samples_per_tensor bounds each value list") {
  auto capture = capture_model(twice_model(), std::vector<std::string>{"<root>"},
                               CaptureLimits().with_max_samples_per_tensor(2));
  auto scope = capture.enter();
  capture.forward(positional({kInput}));
  REQUIRE(capture.snapshots().size() == 2);
  CHECK(capture.snapshots()[0].values().size() == 2);
  CHECK(capture.snapshots()[0].sampled_bytes() == 8);
}

TEST_CASE("traversal quota: the node reaching the limit is handled, then the walk stops") {
  const auto model = scripted("Fan",
                              "def forward(self, x):\n"
                              "  return (x, x + 1, x + 2, x + 3)\n");
  auto capture = capture_model(model, std::nullopt, CaptureLimits().with_max_traversal_nodes(3));
  auto scope = capture.enter();
  capture.forward(positional({kInput}));
  // input walk: args(1) x(2); output walk: tuple(1) output.0(2) output.1(3, recorded) stop
  CHECK(trace(capture) == std::vector<std::string>{"<root> 0 input args 0",
                                                   "<root> 0 output output 0",
                                                   "<root> 0 output output 1"});
}

TEST_CASE("depth quota: children of a container at the limit are not visited") {
  const auto model = scripted("Nest",
                              "def forward(self, x):\n"
                              "  return (x, ([x], {'k': x}))\n");
  SUBCASE("depth 1") {
    auto capture = capture_model(model, std::nullopt, CaptureLimits().with_max_container_depth(1));
    auto scope = capture.enter();
    capture.forward(positional({kInput}));
    CHECK(trace(capture) ==
          std::vector<std::string>{"<root> 0 input args 0", "<root> 0 output output 0"});
  }
  SUBCASE("depth 3") {
    auto capture = capture_model(model, std::nullopt, CaptureLimits().with_max_container_depth(3));
    auto scope = capture.enter();
    capture.forward(positional({kInput}));
    CHECK(trace(capture) ==
          std::vector<std::string>{"<root> 0 input args 0", "<root> 0 output output 0",
                                   "<root> 0 output output 1 0 0", "<root> 0 output output 1 1 k"});
  }
}

TEST_CASE("the root's keyword arguments: their own root, in schema order, counted as nodes") {
  const auto model = scripted("Kw",
                              "def forward(self, x, bias: Tensor, scale: float = 1.0):\n"
                              "  return x * scale + bias\n");
  ForwardInputs inputs{{kInput}, {{"bias", c10::IValue(at::ones({3}))}, {"scale", 2.0}}};
  {
    auto capture = capture_model(model);
    auto scope = capture.enter();
    capture.forward(inputs);
    CHECK(trace(capture) == std::vector<std::string>{"<root> 0 input args 0",
                                                     "<root> 0 input kwargs bias",
                                                     "<root> 0 output output"});
  }
  {
    // args(1) x(2) kwargs(3): the walk stops before bias
    auto capture = capture_model(model, std::nullopt, CaptureLimits().with_max_traversal_nodes(3));
    auto scope = capture.enter();
    capture.forward(inputs);
    CHECK(trace(capture) ==
          std::vector<std::string>{"<root> 0 input args 0", "<root> 0 output output"});
  }
}

TEST_CASE("metadata-only and empty tensors use a snapshot each") {
  const auto model = scripted("Odd",
                              "def forward(self, x):\n"
                              "  return (x.to_sparse(), torch.empty([2], device='meta'),\n"
                              "          torch.quantize_per_tensor(x, 0.1, 0, 13),\n"
                              "          torch.view_as_complex(torch.ones([2, 2])), x[0:0])\n");
  auto capture = capture_model(model, std::vector<std::string>{"<root>"});
  auto scope = capture.enter();
  capture.forward(positional({kInput}));
  const auto& s = capture.snapshots();
  REQUIRE(s.size() == 6);
  CHECK(s[1].sample_omission_reason() == "non_strided_layout");
  CHECK(s[2].sample_omission_reason() == "meta_device");
  CHECK(s[2].device() == "meta");
  CHECK(s[3].sample_omission_reason() == "quantized_dtype");
  CHECK(s[3].dtype() == "torch.quint8");
  CHECK(s[4].sample_omission_reason() == "complex_dtype");
  CHECK(s[4].dtype() == "torch.complex64");
  CHECK(s[5].sample_omission_reason() == std::nullopt);
  CHECK(s[5].shape() == std::vector<std::int64_t>{0, 3});
  for (std::size_t i = 1; i < 6; ++i) {
    CHECK(s[i].values().empty());
    CHECK(s[i].sampled_bytes() == 0);
  }
  CHECK(s[1].numel() == 6);
}

TEST_CASE("inputs are observed before forward mutates them in place") {
  const auto inplace = scripted("AddOne", "def forward(self, x):\n  return x.add_(1.0)\n");
  const auto model = scripted(
      "Outer", "def forward(self, x):\n  return self.inc.forward(x.clone())\n", {{"inc", inplace}});
  auto capture = capture_model(model, std::vector<std::string>{"inc"});
  auto scope = capture.enter();
  capture.forward(positional({at::zeros({2})}));
  REQUIRE(capture.snapshots().size() == 2);
  CHECK(std::get<double>(capture.snapshots()[0].values()[0]) == 0.0);
  CHECK(std::get<double>(capture.snapshots()[1].values()[0]) == 1.0);
}

TEST_CASE("a forward that raises: records so far kept, no output record, scope closed") {
  const auto failing = scripted("Fail",
                                "def forward(self, x):\n"
                                "  assert bool(x.sum() <= 0), 'positive input'\n"
                                "  return x\n");
  const auto model =
      scripted("Host", "def forward(self, x):\n  return self.check.forward(self.act.forward(x))\n",
               {{"act", relu_module()}, {"check", failing}});
  const std::string before = module_state(model);
  auto capture = capture_model(model);
  {
    auto scope = capture.enter();
    CHECK_THROWS(capture.forward(positional({kInput})));
  }
  CHECK(!capture.active());
  CHECK(trace(capture) == std::vector<std::string>{"<root> 0 input args 0", "act 0 input args 0",
                                                   "act 0 output output", "check 0 input args 0"});
  CHECK(module_state(model) == before);
  // the same capture still works afterwards, call indices continuing
  {
    auto scope = capture.enter();
    capture.forward(positional({-kInput.abs()}));
  }
  CHECK(trace(capture).back() == "<root> 1 output output");
}

TEST_CASE("the caller's module is left as it was: graphs, flags, tensors") {
  for (const char* name : {"everything.pt", "convnet.pt", "dict_model.pt", "transformer.pt"}) {
    CAPTURE(name);
    const auto model = load_torchscript_archive(fixture(name));
    const std::string before = module_state(model);
    auto capture = capture_model(model);
    CHECK(module_state(model) == before);
    (void)capture;
  }
  auto model = load_torchscript_archive(fixture("convnet.pt"));
  const std::string before = module_state(model);
  {
    auto capture = capture_model(model);
    auto scope = capture.enter();
    capture.forward(positional({at::rand({1, 3, 8, 8})}));
    capture.forward(positional({at::rand({1, 3, 8, 8})}));  // the optimised second run too
    capture.forward(positional({at::rand({1, 3, 8, 8})}));
    CHECK(capture.snapshots().size() == 64);
  }
  CHECK(module_state(model) == before);
}

TEST_CASE("instrumentation never changes outputs") {
  auto model = load_torchscript_archive(fixture("convnet.pt"));
  const at::Tensor x = at::rand({2, 3, 16, 16});
  const at::Tensor plain = model.forward({x}).toTensor();
  auto capture = capture_model(model);
  auto scope = capture.enter();
  for (int run = 0; run < 3; ++run) CHECK(capture.forward(positional({x})).toTensor().equal(plain));
}

TEST_CASE("in place or on a clone, a capture records the same") {
  // everything.pt: hooks, dict and tuple outputs, repeated calls; the capture fixtures add
  // scripted hooks on submodules (hooknet) and calls through module interfaces (interfaces)
  const std::vector<std::pair<std::string, std::string>> cases = {
      {fixture("everything.pt"), fixture("inputs/everything_positional.npz")},
      {VIN_CAPTURE_FIXTURE_DIR "/hooknet.pt", VIN_CAPTURE_FIXTURE_DIR "/hooknet_inputs.npz"},
      {VIN_CAPTURE_FIXTURE_DIR "/interfaces.pt", VIN_CAPTURE_FIXTURE_DIR "/interfaces_input.npz"}};
  for (const auto& [archive, inputs_file] : cases) {
    CAPTURE(archive);
    auto records = [&, archive = archive, inputs_file = inputs_file](bool in_place) {
      auto model = load_torchscript_archive(archive);
      const ForwardInputs inputs = read_forward_inputs(inputs_file, model, c10::Device("cpu"));
      auto capture = in_place ? capture_model_in_place(model) : capture_model(model);
      {
        auto scope = capture.enter();
        capture.forward(inputs);
      }
      std::string lines;
      for (const auto& s : capture.snapshots()) lines += dump_line(to_json(s)) + "\n";
      return lines;
    };
    const std::string cloned = records(false);
    CHECK(cloned.size() > 0);
    CHECK(records(true) == cloned);
  }
}

namespace {

// A consumer that lists the keys it is handed and whether the capture kept each.
class KeyLister final : public TensorConsumer {
 public:
  explicit KeyLister(bool every) : every_(every) {}
  bool wants_every_tensor() const override { return every_; }
  void take(ReachedTensor& reached) override {
    taken.push_back(reached.key.name());
    kept.push_back(reached.kept);
  }
  void summarize(CaptureSummary& summary) const override {
    summary.checked_tensors = static_cast<std::int64_t>(taken.size());
  }
  std::vector<std::string> taken;
  std::vector<bool> kept;

 private:
  bool every_;
};

}  // namespace

TEST_CASE(
    "an added consumer takes every reached tensor in capture order, past the quotas when "
    "it asks for them") {
  auto model = load_torchscript_archive(fixture("convnet.pt"));
  const auto x = positional({at::rand({1, 3, 8, 8})});
  // the capture's own snapshots, without quotas in the way: the order every consumer sees
  std::vector<std::string> all;
  {
    auto capture = capture_model(model, std::nullopt,
                                 CaptureLimits().with_max_tensors(100000).with_max_bytes(1 << 30));
    auto scope = capture.enter();
    capture.forward(x);
    for (const TensorSnapshot& s : capture.snapshots())
      all.push_back(
          TensorKey{s.module_path(), s.call_index(), s.direction(), s.tensor_path()}.name());
  }
  REQUIRE(all.size() > 3);
  for (const bool every : {false, true}) {
    CAPTURE(every);
    auto capture = capture_model(model, std::nullopt, CaptureLimits().with_max_tensors(3));
    auto lister = std::make_shared<KeyLister>(every);
    capture.add_consumer(lister);
    {
      auto scope = capture.enter();
      capture.forward(x);
    }
    REQUIRE(capture.snapshots().size() == 3);
    // the walks stop at the quota unless the consumer wants every tensor
    const std::vector<std::string> expected =
        every ? all : std::vector<std::string>(all.begin(), all.begin() + 3);
    CHECK(lister->taken == expected);
    for (std::size_t i = 0; i < lister->kept.size(); ++i) CHECK(lister->kept[i] == (i < 3));
    CHECK(capture.summary().checked_tensors == static_cast<std::int64_t>(expected.size()));
  }
}
