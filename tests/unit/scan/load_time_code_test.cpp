#include "vin/diagnostics/scan/load_time_code.h"

#include <doctest/doctest.h>

#include <string>
#include <utility>
#include <vector>

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
  CHECK(judge_load_time_code(one(module_calling("_1 = len(\"torch.save(\" + '\"print(')"))).empty());
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

using Found = std::vector<std::pair<std::string, bool>>;

// The names of what `source` does beyond copying state, and whether each runs code
Found found_in(const std::string& source) {
  Found out;
  for (const LoadTimeFinding& f : judge_load_time_code(one(source))) out.emplace_back(f.name, f.runs_code);
  return out;
}

TEST_CASE("calls are found however the source spells them (the review's evasions)") {
  for (const char* line : {"torch.save (t, \"x\")", "torch. save(t, \"x\")", "_1 = (torch).save(t, \"x\")",
                           "_1 = (\"\"\"a\"b\"\"\", torch.save(t, \"x\"))", "_1 = [r'(', torch.save(t, 'x')]"})
    CHECK_MESSAGE((found_in(module_calling(line)) == Found{{"torch.save", true}}), line);
  CHECK((found_in(module_calling("print (\"x\")")) == Found{{"print", true}}));
  CHECK((found_in(module_calling("ops.prim.Print(\"x\")")) == Found{{"ops.prim.Print", true}}));
  CHECK((found_in(module_calling("while(torch.ge(1, 0)):\n      pass")) == Found{{"while", true}}));
  // what cannot be named cannot be judged: never weights-only
  CHECK((found_in(module_calling("_1 = getattr(torch, \"save\")(t, \"x\")")) ==
        Found{{"getattr", false}, {"call of an expression", false}}));
  CHECK((found_in(module_calling("_1 = \"unterminated")) == Found{{"code not read", false}}));
}

TEST_CASE("code laid out otherwise than torch's printer does is not read, so not judged") {
  const std::string shifted = "    " + module_calling("torch.save(t, \"x\")");  // first line only
  CHECK((found_in(shifted) == Found{{"code not read", false}}));
  std::string odd = module_calling("torch.save(t, \"x\")");
  odd.replace(odd.find("    torch.save"), 4, "   ");
  CHECK((found_in(odd) == Found{{"code not read", false}}));
  std::string tabs = module_calling("torch.save(t, \"x\")");
  tabs.replace(tabs.find("    torch.save"), 4, "\t");
  CHECK((found_in(tabs) == Found{{"code not read", false}}));
  CHECK((found_in("torch.save(1, \"x\")\n") == Found{{"code not read", false}}));
  CHECK(found_in(std::string(kQuantizedLinear)).empty());
}

TEST_CASE("default values of every signature are load-time code (the compiler evaluates them)") {
  const std::string source =
      "class M(Module):\n"
      "  __parameters__ = []\n"
      "  __buffers__ = []\n"
      "  training : bool\n"
      "  def forward(self: __torch__.m.M,\n"
      "    y: int=len([torch.save(1, \"x\")])) -> int:\n"
      "    return y\n"
      "  def other(self: __torch__.m.M, z: Optional[int]=None, d: Device=torch.device(\"cpu\")) -> int:\n"
      "    return 1\n";
  const auto found = judge_load_time_code(one(source));
  REQUIRE(found.size() == 1);
  CHECK(found[0].name == "torch.save");
  CHECK(found[0].reason.find("M.forward's default arguments") == 0);
}

TEST_CASE("attribute chains and the printer's aliases reach the class they name") {
  const std::string classes =
      "class Outer(Module):\n"
      "  __parameters__ = []\n"
      "  __buffers__ = []\n"
      "  training : bool\n"
      "  a : __torch__.m.A\n"
      "  obj : __torch__.torch.classes.myext.Thing\n"
      "  def __setstate__(self: __torch__.m.Outer,\n"
      "    state: Tuple[bool]) -> None:\n"
      "    self.training = (state)[0]\n"
      "    LINE\n"
      "    return None\n"
      "class A(Module):\n"
      "  __parameters__ = []\n"
      "  __buffers__ = []\n"
      "  training : bool\n"
      "  b : __torch__.m.B\n"
      "class B(Module):\n"
      "  __parameters__ = []\n"
      "  __buffers__ = []\n"
      "  training : bool\n"
      "  def evil(self: __torch__.m.B) -> None:\n"
      "    torch.save(1, \"x\")\n"
      "    return None\n";
  const auto with = [&](const std::string& line) {
    std::string s = classes;
    return found_in(s.replace(s.find("LINE"), 4, line));
  };
  CHECK((with("_0 = self.a.b.evil()") == Found{{"torch.save", true}}));
  CHECK((with("b = self.a.b\n    _0 = (b).evil()") == Found{{"torch.save", true}}));
  CHECK((with("obj = self.obj\n    _0 = (obj).run()") == Found{{"__torch__.torch.classes.myext.Thing", true}}));
  CHECK((with("_0 = self.obj.run()") == Found{{"__torch__.torch.classes.myext.Thing", true}}));
  // a value this reader cannot type, in an archive holding a custom class: not judged
  CHECK((with("_0 = (state)[0].run()") == Found{{"untyped call", false}}));
}

TEST_CASE("a name defined twice is not judged") {
  const std::string source = module_calling("_1 = torch.add(t, 1)");
  const auto found = judge_load_time_code({{"archive/code/__torch__/m.py", source},
                                           {"archive/code/__torch__/m.py", source}});
  REQUIRE_FALSE(found.empty());
  CHECK(found[0].name == "defined twice");
  CHECK_FALSE(found[0].runs_code);
}

TEST_CASE("torch's namespaces") {
  for (const char* ns : {"aten", "prim", "quantized", "prepacked"}) CHECK(torch_operator_namespace(ns));
  for (const char* ns : {"myext", "torchvision", "", "os"}) CHECK_FALSE(torch_operator_namespace(ns));
  CHECK(torch_class_namespace("quantized"));
  CHECK_FALSE(torch_class_namespace("myext"));
}
