#include <doctest/doctest.h>

#include <deque>
#include <string>

#include "vin/diagnostics/torchscript/class_source.h"
#include "vin/diagnostics/torchscript/module_state.h"

using namespace vin::diagnostics;

namespace {

// how TorchScript prints a quantized conv's class (abridged)
const char* kConvSource = R"(class Conv2d(Module):
  __parameters__ = []
  __buffers__ = ["bias_buf", ]
  training : bool
  in_channels : int
  scale : float
  bias_buf : Tensor
  def forward(self: __torch__.q.Conv2d,
    input: Tensor) -> Tensor:
    return input
  def __setstate__(self: __torch__.q.Conv2d,
    state: Tuple[int, float, bool, Tensor]) -> NoneType:
    self.in_channels = (state)[0]
    _7 = (self).set_weight_bias((state)[1], )
    self.training = (state)[2]
    self.scale = (state)[1]
    self.bias_buf = (state)[3]
    return None
  def set_weight_bias(self: __torch__.q.Conv2d,
    w: float) -> NoneType:
    self.packed = w
    return None
def free_function(x: int) -> int:
  return x
)";

// values made by hand, as the pickle reader makes them: they never move once made
struct Document {
  std::deque<PickleValue> values;
  PickleValue* make(PickleValue::Kind kind) {
    values.emplace_back().kind = kind;
    return &values.back();
  }
};

}  // namespace

TEST_CASE("class sources: headers, declarations, multi-line signatures and method bodies") {
  ClassSources classes;
  read_class_sources("code/__torch__/q.py", kConvSource, classes);
  REQUIRE(classes.count("__torch__.q.Conv2d") == 1);
  const ClassSource& conv = classes.at("__torch__.q.Conv2d");
  CHECK(conv.is_module);
  CHECK(conv.buffers.count("bias_buf") == 1);
  REQUIRE(conv.attributes.size() == 4);
  CHECK(conv.attributes[1] == std::make_pair(std::string("in_channels"), std::string("int")));
  REQUIRE(conv.methods.size() == 3);
  CHECK(conv.methods[0].name == "forward");
  CHECK(conv.methods[0].signature ==
        "def forward(self: __torch__.q.Conv2d,\n    input: Tensor) -> Tensor:");
  const MethodSource* setstate = conv.method("__setstate__");
  REQUIRE(setstate != nullptr);
  CHECK(setstate->body.size() == 6);
  CHECK(setstate->body.front() == "self.in_channels = (state)[0]");
  CHECK(classes.count("__torch__.q.free_function") == 0);
}

TEST_CASE("__setstate__ is read from its source, never run") {
  ClassSources classes;
  read_class_sources("code/__torch__/q.py", kConvSource, classes);
  const ClassSource& conv = classes.at("__torch__.q.Conv2d");
  Document d;
  auto* state = d.make(PickleValue::Kind::tuple);
  auto* channels = d.make(PickleValue::Kind::integer);
  auto* scale = d.make(PickleValue::Kind::floating);
  auto* training = d.make(PickleValue::Kind::boolean);
  auto* tensor = d.make(PickleValue::Kind::tensor);
  training->boolean = true;
  state->items = {channels, scale, training, tensor};
  auto* object = d.make(PickleValue::Kind::object);
  object->text = "__torch__.q.Conv2d";
  object->state = state;

  SUBCASE("direct assignments, in the class's declaration order") {
    const auto attributes = module_attributes(object, conv, classes);
    REQUIRE(attributes.size() == 4);
    CHECK(attributes[0] == ModuleAttribute{"training", training});
    CHECK(attributes[1] == ModuleAttribute{"in_channels", channels});
    CHECK(attributes[2] == ModuleAttribute{"scale", scale});
    CHECK(attributes[3] == ModuleAttribute{"bias_buf", tensor});
  }
  SUBCASE("a state without the item read is refused") {
    state->items.pop_back();
    CHECK_THROWS_WITH(module_attributes(object, conv, classes),
                      "__torch__.q.Conv2d's __setstate__ reads item 3 of a state that does not "
                      "have it");
  }
  SUBCASE("a called method that sets a buffer is refused") {
    std::string source = kConvSource;
    source.replace(source.find("self.packed = w"), 15, "self.bias_buf = w");
    ClassSources changed;
    read_class_sources("code/__torch__/q.py", source, changed);
    CHECK_THROWS_WITH(module_attributes(object, changed.at("__torch__.q.Conv2d"), changed),
                      "__torch__.q.Conv2d's __setstate__ calls set_weight_bias, which sets "
                      "bias_buf");
  }
  SUBCASE("training computed instead of copied is refused") {
    std::string source = kConvSource;
    source.replace(source.find("self.training = (state)[2]"), 26,
                   "self.training = torch.__not__((state)[2])");
    ClassSources changed;
    read_class_sources("code/__torch__/q.py", source, changed);
    CHECK_THROWS_WITH(module_attributes(object, changed.at("__torch__.q.Conv2d"), changed),
                      "__torch__.q.Conv2d's __setstate__ sets training from something other "
                      "than its state");
  }
}
