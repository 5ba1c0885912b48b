#include "vin/diagnostics/scan/load_time_code.h"

#include <doctest/doctest.h>

#include <string>

using namespace vin::diagnostics;

namespace {

// torch.nn.quantized's LinearPackedParams as TorchScript 1.x printed it (snakers4/silero-vad's
// model.jit): __setstate__ assigns its state and packs the weight with quantized's operator
constexpr const char* kQuantizedLinear = R"(class LinearPackedParams(Module):
  __parameters__ = []
  __buffers__ = []
  training : bool
  dtype : int
  _packed_params : __torch__.torch.classes.quantized.LinearPackedParamsBase
  def forward(self: __torch__.torch.nn.quantized.modules.linear.LinearPackedParams,
    x: Tensor) -> Tensor:
    return x
  def __setstate__(self: __torch__.torch.nn.quantized.modules.linear.LinearPackedParams,
    state: Tuple[Tensor, Optional[Tensor], bool, int]) -> None:
    self.dtype = (state)[3]
    _1 = (self).set_weight_bias((state)[0], (state)[1], )
    self.training = (state)[2]
    return None
  def set_weight_bias(self: __torch__.torch.nn.quantized.modules.linear.LinearPackedParams,
    weight: Tensor,
    bias: Optional[Tensor]) -> None:
    if torch.eq(self.dtype, 12):
      _2 = ops.quantized.linear_prepack(weight, bias)
      self._packed_params = _2
    else:
      ops.prim.RaiseException("Unsupported dtype on dynamic quantized linear!")
    return None
)";

CodeMembers one(const std::string& text) {
  return {{"archive/code/__torch__/m.py", text}};
}

// A module whose __setstate__ calls `helper`, whose body is `call_line`
std::string module_calling(const std::string& call_line) {
  return "class M(Module):\n"
         "  __parameters__ = []\n"
         "  __buffers__ = []\n"
         "  training : bool\n"
         "  def __setstate__(self: __torch__.m.M,\n"
         "    state: Tuple[Tensor, bool]) -> None:\n"
         "    self.training = (state)[1]\n"
         "    _0 = (self).helper((state)[0], )\n"
         "    return None\n"
         "  def helper(self: __torch__.m.M,\n"
         "    t: Tensor) -> None:\n"
         "    " + call_line + "\n"
         "    return None\n";
}

}  // namespace

TEST_CASE("a __setstate__ that assigns its state and packs with torch's operators copies state") {
  CHECK(judge_load_time_code(one(kQuantizedLinear)).empty());
  CHECK(judge_load_time_code(one(module_calling("_1 = torch.add(t, 1)"))).empty());
  CHECK(judge_load_time_code(one(module_calling("ops.prim.Print(\"torch.save(\")"))).empty());
  CHECK(judge_load_time_code({}).empty());
}

TEST_CASE("file operators reached from __setstate__ are dangerous and run code") {
  for (const char* line : {"torch.save(t, \"/tmp/x\")", "_1 = torch.from_file(\"/etc/passwd\", False, 4)",
                           "_1 = ops.aten.save(t, \"x\")", "_1 = torch.ops.aten.from_file(\"f\")"}) {
    const auto found = judge_load_time_code(one(module_calling(line)));
    REQUIRE_MESSAGE(found.size() == 1, line);
    CHECK(found[0].severity == "dangerous");
    CHECK(found[0].runs_code);
    CHECK(found[0].record == "archive/code/__torch__/m.py");
    CHECK(found[0].reason.find("M.__setstate__ (through M.helper)") == 0);
  }
}

TEST_CASE("custom operators and custom classes reached from __setstate__ run code") {
  auto found = judge_load_time_code(one(module_calling("_1 = ops.myext.run(t)")));
  REQUIRE(found.size() == 1);
  CHECK(found[0].name == "ops.myext.run");
  CHECK(found[0].severity == "not-allowed");
  CHECK(found[0].runs_code);
  found = judge_load_time_code(one(module_calling("_1 = torch.classes.evil.Thing(t)")));
  REQUIRE(found.size() == 1);
  CHECK(found[0].name == "torch.classes.evil.Thing");
  // torch's own classes are torch's code
  CHECK(judge_load_time_code(one(module_calling("_1 = torch.classes.quantized.X(t)"))).empty());
}

TEST_CASE("code reached through free functions, submodules and constructed objects is walked") {
  const std::string functions = module_calling("_1 = __torch__.m.f(t)") +
                                "def f(t: Tensor) -> Tensor:\n"
                                "  _0 = ops.myext.run(t)\n"
                                "  return _0\n";
  auto found = judge_load_time_code(one(functions));
  REQUIRE(found.size() == 1);
  CHECK(found[0].name == "ops.myext.run");
  CHECK(found[0].reason.find("(through f)") != std::string::npos);

  const std::string submodule =
      "class Outer(Module):\n"
      "  __parameters__ = []\n"
      "  __buffers__ = []\n"
      "  training : bool\n"
      "  inner : __torch__.m.Inner\n"
      "  def __setstate__(self: __torch__.m.Outer,\n"
      "    state: Tuple[bool]) -> None:\n"
      "    self.training = (state)[0]\n"
      "    _0 = (self.inner).forward()\n"
      "    return None\n"
      "class Inner(Module):\n"
      "  __parameters__ = []\n"
      "  __buffers__ = []\n"
      "  training : bool\n"
      "  def forward(self: __torch__.m.Inner) -> None:\n"
      "    torch.save(1, \"x\")\n"
      "    return None\n";
  found = judge_load_time_code(one(submodule));
  REQUIRE(found.size() == 1);
  CHECK(found[0].name == "torch.save");
  CHECK(found[0].reason.find("(through Inner.forward)") != std::string::npos);

  const std::string constructed = module_calling("_1 = __torch__.m.Box.__new__(__torch__.m.Box)") +
                                  "class Box(object):\n"
                                  "  def __init__(self: __torch__.m.Box) -> None:\n"
                                  "    _0 = ops.myext.run()\n"
                                  "    return None\n";
  found = judge_load_time_code(one(constructed));
  REQUIRE(found.size() == 1);
  CHECK(found[0].name == "ops.myext.run");
}

TEST_CASE("loops that need not end and printing are more than copying state") {
  auto found = judge_load_time_code(one(module_calling("while torch.ge(1, 0):\n      pass")));
  REQUIRE(found.size() == 1);
  CHECK(found[0].name == "while");
  CHECK(found[0].runs_code);
  found = judge_load_time_code(one(module_calling("print(\"{\\\"record\\\": 1}\")")));
  REQUIRE(found.size() == 1);
  CHECK(found[0].name == "print");
  // a for loop over a range ends: torch.nn's quantized modules use them
  CHECK(judge_load_time_code(one(module_calling("for _2 in range(2):\n      _3 = torch.add(t, 1)"))).empty());
}

TEST_CASE("what cannot be read or is not there cannot be judged, without running code") {
  auto found = judge_load_time_code(one(module_calling("_1 = __torch__.m.missing(t)")));
  REQUIRE(found.size() == 1);
  CHECK_FALSE(found[0].runs_code);
  found = judge_load_time_code(one("class M(Module):\n  def __setstate__(self, s) -> None:\n"
                                   "    return None\nstray line\n"));
  REQUIRE(found.size() == 1);
  CHECK(found[0].name == "code not read");
  CHECK_FALSE(found[0].runs_code);
  // recursion ends: a method that calls itself is walked once
  CHECK(judge_load_time_code(one(module_calling("_1 = (self).helper(t)"))).empty());
}

TEST_CASE("torch's namespaces") {
  for (const char* ns : {"aten", "prim", "quantized", "prepacked"}) CHECK(torch_operator_namespace(ns));
  for (const char* ns : {"myext", "torchvision", "", "os"}) CHECK_FALSE(torch_operator_namespace(ns));
  CHECK(torch_class_namespace("quantized"));
  CHECK_FALSE(torch_class_namespace("myext"));
}
