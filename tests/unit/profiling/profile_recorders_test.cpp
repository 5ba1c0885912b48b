// profile's LibTorch recorders: OperatorEvents (the dispatcher's operator calls and the
// allocator's reports on the installing thread) and the ProfileRecorder behind profile_archive
// (module calls, FLOPs, shapes and parameters of a real archive's instrumented forward).
#include <torch/script.h>

#include <unistd.h>
#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "vin/diagnostics/profiling/operator_events.h"
#include "vin/diagnostics/profiling/profile_archive.h"
#include "vin/diagnostics/text/shape_spec.h"

#include "doctest_after_torch.h"  // last: after glog's CHECK macros

using namespace vin::diagnostics;

namespace {

// Every event in order: "start NAME [shapes]", "end FLOPS"; memory changes summed apart.
struct RecordingSink final : OperatorEventSink {
  std::vector<std::string> events;
  std::int64_t allocated = 0;
  std::int64_t freed = 0;
  void operator_started(const char* name,
                        std::vector<std::vector<std::int64_t>> input_shapes) override {
    std::string line = std::string("start ") + name;
    for (const auto& shape : input_shapes) {
      line += " [";
      for (std::size_t i = 0; i < shape.size(); ++i)
        line += (i ? "," : "") + std::to_string(shape[i]);
      line += "]";
    }
    events.push_back(line);
  }
  void operator_ended(FlopCount flops, bool raised) override {
    events.push_back("end " + flop_digits(flops) + (raised ? " raised" : ""));
  }
  void memory_changed(std::int64_t bytes) override { (bytes > 0 ? allocated : freed) += bytes; }
};

struct TempFolder {
  std::string path;
  TempFolder() {
    char name[] = "/tmp/vin-profile-test-XXXXXX";
    REQUIRE(::mkdtemp(name) != nullptr);
    path = name;
  }
  ~TempFolder() { std::filesystem::remove_all(path); }
};

}  // namespace

TEST_CASE("OperatorEvents reports the thread's operator calls with shapes, FLOPs and memory") {
  const at::Tensor a = at::ones({2, 3});
  const at::Tensor b = at::ones({3, 4});
  RecordingSink sink;
  {
    OperatorEvents events(sink, c10::Device(c10::kCPU), /*input_shapes=*/true);
    at::Tensor c = at::mm(a, b);  // 2*3*4 multiply-adds: 48 FLOPs, a 2x4 float output
    CHECK(c.sum().item<float>() == 24.0f);
    CHECK_FALSE(events.saw_other_threads());
  }
  REQUIRE(!sink.events.empty());
  CHECK(sink.events.front() == "start aten::mm [2,3] [3,4]");
  // the mm's own end carries its FLOPs; starts and ends pair up
  const auto mm_end = std::find(sink.events.begin(), sink.events.end(), "end 48");
  CHECK(mm_end != sink.events.end());
  std::int64_t open = 0;
  for (const auto& e : sink.events) {
    open += e.rfind("start ", 0) == 0 ? 1 : -1;
    CHECK(open >= 0);
  }
  CHECK(open == 0);
  CHECK(sink.allocated >= 2 * 4 * 4);  // mm's output, at least
  CHECK(sink.freed < 0);               // c and the sum's temporaries went away inside

  // once it is destroyed, nothing more is reported
  const std::size_t seen = sink.events.size();
  (void)at::mm(a, b);
  CHECK(sink.events.size() == seen);
}

TEST_CASE("OperatorEvents leaves argument shapes out unless asked, and still counts FLOPs") {
  const at::Tensor x = at::ones({5});
  const at::Tensor a = at::ones({1, 2});
  const at::Tensor b = at::ones({2, 1});
  RecordingSink sink;
  {
    OperatorEvents events(sink, c10::Device(c10::kCPU), /*input_shapes=*/false);
    (void)at::relu(x);
    (void)at::mm(a, b);  // its shapes read for its FLOPs (2 * 1 * 2 * 1), not handed on
  }
  const std::vector<std::string> expected{"start aten::relu", "end 0", "start aten::mm", "end 4"};
  std::vector<std::string> outermost;  // what the dispatcher called inside them left out
  std::int64_t open = 0;
  for (const auto& e : sink.events) {
    const bool start = e.rfind("start ", 0) == 0;
    if ((start && open == 0) || (!start && open == 1)) outermost.push_back(e);
    open += start ? 1 : -1;
  }
  CHECK(outermost == expected);
}

TEST_CASE("profile_archive records each module call with its FLOPs, shapes and parameters") {
  // <root> (Net) calls fc (Linear 4 -> 3) once and act (ReLU) twice
  torch::jit::Module act("__torch__.test.Act");
  act.define("def forward(self, x):\n  return torch.relu(x)\n");
  torch::jit::Module fc("__torch__.test.Fc");
  fc.register_parameter("weight", at::ones({3, 4}), /*is_buffer=*/false);
  fc.register_parameter("bias", at::zeros({3}), /*is_buffer=*/false);
  fc.define("def forward(self, x):\n  return torch.linear(x, self.weight, self.bias)\n");
  torch::jit::Module net("__torch__.test.Net");
  net.register_module("fc", fc);
  net.register_module("act", act);
  net.define(
      "def forward(self, x):\n"
      "  return self.act.forward(self.fc.forward(self.act.forward(x)))\n");
  TempFolder dir;
  const std::string archive = dir.path + "/net.pt";
  net.save(archive);

  ProfileRequest request;
  request.run.archive = archive;
  request.run.shaped = ShapedInputs{{parse_shape_spec("x=2x4")}, 2};
  request.warmup = 1;
  request.runs = 2;
  request.trace = true;
  const ProfileResult result = profile_archive(request);
  REQUIRE_MESSAGE(!result.error, result.error.value_or(""));
  const ProfileRecords& p = result.records;
  REQUIRE(p.modules.size() == 3);
  CHECK(p.modules[0].module_path == "<root>");
  CHECK(p.modules[0].module_type == "test.Net");
  CHECK(p.modules[1].module_path == "act");  // in the order of their first calls
  CHECK(p.modules[1].calls == 2);
  CHECK(p.modules[2].module_path == "fc");
  CHECK(p.modules[2].calls == 1);
  CHECK(p.modules[2].parameters == 15);
  CHECK(p.modules[0].parameters == 15);
  CHECK(p.modules[2].input_shapes == std::vector<std::vector<std::int64_t>>{{2, 4}});
  CHECK(p.modules[2].output_shapes == std::vector<std::vector<std::int64_t>>{{2, 3}});
  // linear: 2 x 3 outputs of 4 multiply-adds each (torch.utils.flop_counter's addmm)
  CHECK(p.modules[2].flops == 2 * 2 * 3 * 4);
  CHECK(p.modules[0].flops == p.modules[2].flops);
  CHECK(p.modules[0].self_flops == 0);
  CHECK(p.modules[1].flops == 0);
  CHECK(p.summary.flops == 48);
  CHECK(p.summary.runs == 2);
  CHECK(p.summary.warmup == 1);
  CHECK(p.summary.latency_ms.min <= p.summary.latency_ms.median);
  CHECK(p.modules[0].time_ms >= p.modules[2].time_ms);
  bool relu_seen = false;
  for (const auto& o : p.operators)
    relu_seen = relu_seen || (o.name == "aten::relu" && o.calls == 2);
  CHECK(relu_seen);
  // the trace: a span per module call (4) and per operator call the code made
  std::size_t module_spans = 0;
  for (const auto& span : result.spans) module_spans += span.kind == ProfileSpan::Kind::module;
  CHECK(module_spans == 4);
}
