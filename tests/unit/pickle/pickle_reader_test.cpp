#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "byte_literal.h"
#include "vin/diagnostics/pickle/pickle_reader.h"
#include "vin/diagnostics/plugin/torch_plugin.h"
#include "vin/diagnostics/records/error.h"

using namespace vin::diagnostics;
using Kind = PickleValue::Kind;

TEST_CASE("a tensor is its element count and requires_grad; a memo reference is one value") {
  // (t, t) where t = torch._utils._rebuild_tensor_v2(<storage>, 0, (2, 3), (3, 1), True,
  // OrderedDict())
  const std::string p = BYTES(
      "\x80\x02"
      "ctorch._utils\n_rebuild_tensor_v2\n"
      "((X\x07\x00\x00\x00"
      "storagectorch\nFloatStorage\nX\x01\x00\x00\x00"
      "0X\x03\x00\x00\x00"
      "cpuK\x06tQK\x00K\x02K\x03\x86K\x03K\x01\x86\x88"
      "ccollections\nOrderedDict\n)Rtq\x00R"
      "q\x01h\x01\x86.");
  const PickleDocument doc = read_pickle(p);
  REQUIRE(doc.root->kind == Kind::tuple);
  REQUIRE(doc.root->items.size() == 2);
  const PickleValue* t = doc.root->items[0];
  CHECK(t->kind == Kind::tensor);
  CHECK(t->numel == 6);
  CHECK(t->requires_grad);
  CHECK(doc.root->items[1] == t);  // BINGET gives the same value back
}

TEST_CASE("a tensor its storage cannot hold is refused, as LibTorch refuses it") {
  // (2, 3) with strides (3, 1) reaches element 5: a storage of 5 elements is too small
  const std::string p = BYTES(
      "\x80\x02"
      "ctorch._utils\n_rebuild_tensor_v2\n"
      "((X\x07\x00\x00\x00"
      "storagectorch\nFloatStorage\nX\x01\x00\x00\x00"
      "0X\x03\x00\x00\x00"
      "cpuK\x05tQK\x00K\x02K\x03\x86K\x03K\x01\x86\x88"
      "ccollections\nOrderedDict\n)Rtq\x00R.");
  CHECK_THROWS_AS(read_pickle(p), UnsupportedPickle);
}

TEST_CASE("objects keep their class name and BUILD state; dicts keep their order") {
  const std::string p = BYTES(
      "\x80\x02"
      "c__torch__.m\nNet\n)\x81}(X\x01\x00\x00\x00"
      "bK\x01X\x01\x00\x00\x00"
      "aK\x02ub.");
  const PickleDocument doc = read_pickle(p);
  REQUIRE(doc.root->kind == Kind::object);
  CHECK(doc.root->text == "__torch__.m.Net");
  REQUIRE(doc.root->state);
  REQUIRE(doc.root->state->items.size() == 4);
  CHECK(doc.root->state->items[0]->text == "b");
  CHECK(doc.root->state->items[3]->integer == 2);
}

TEST_CASE("a list appended to itself is read and freed without trouble") {
  const PickleDocument doc =
      read_pickle(BYTES("\x80\x02]q\x00h\x00"
                        "a."));
  REQUIRE(doc.root->kind == Kind::list);
  CHECK(doc.root->items.at(0) == doc.root);
}

TEST_CASE("streams outside the subset are UnsupportedPickle, never a crash") {
  for (const std::string& p :
       {std::string(), BYTES("\x80\x02"), BYTES("\x80\x02K"), BYTES("\x80\x02X\xff\xff\xff\x7f"),
        BYTES("\x80\x02r\xff\xff\xff\x7f."), BYTES("\x80\x02h\x05."), BYTES("\x80\x02t."),
        BYTES("\x80\x02\xfe."), BYTES("\x80\x02K\x01K\x02."),
        BYTES("\x80\x02"
              "a."),
        BYTES("\x80\x02"
              "ctorch._utils\n_rebuild_tensor_v2\n)R.")}) {
    CAPTURE(p);
    CHECK_THROWS_AS(read_pickle(p), UnsupportedPickle);
  }
}

TEST_CASE("a missing LibTorch plugin is an error naming where it was looked for") {
  CHECK_THROWS_WITH_AS(load_torch_plugin({"/nonexistent/libvin_torch_plugin.so"}),
                       "the LibTorch plugin (libvin_torch_plugin.so) is missing; looked for "
                       "/nonexistent/libvin_torch_plugin.so (installed from packages, it is in "
                       "vin-inspect-torch; in a build tree, cmake --build without --target "
                       "builds it)",
                       Error);
}

TEST_CASE(
    "None, booleans, the empty tuple and BININT1's ints are made once, as Python shares "
    "them; every other value is its own, across the reader's blocks of values") {
  // [None, None, True, True, False, (), (), 0, 0, 255, 255, 70000 x 3000 (BININT)]
  std::string p = BYTES("\x80\x02](NNN\x88\x88\x89))K\x00K\x00K\xffK\xff");
  for (int i = 0; i < 3000; ++i) p += BYTES("J\x70\x11\x01\x00");
  p += BYTES("e.");
  const PickleDocument doc = read_pickle(p);
  REQUIRE(doc.root->kind == Kind::list);
  const auto& v = doc.root->items;
  REQUIRE(v.size() == 3012);
  CHECK(v[0]->kind == Kind::none);
  CHECK((v[0] == v[1] && v[1] == v[2]));
  CHECK((v[3]->boolean && v[3] == v[4]));
  CHECK((v[5]->kind == Kind::boolean && !v[5]->boolean && v[5] != v[3]));
  CHECK((v[6]->kind == Kind::tuple && v[6]->items.empty() && v[6] == v[7]));
  CHECK((v[8]->integer == 0 && v[8] == v[9]));
  CHECK((v[10]->integer == 255 && v[10] == v[11] && v[10] != v[8]));
  for (std::size_t i = 12; i < v.size(); ++i) {
    CHECK(v[i]->kind == Kind::integer);
    CHECK(v[i]->integer == 70000);
    CHECK(v[i] != v[i - 1]);
  }
  CHECK(doc.blocks.size() >= 3);  // 3,000 values do not fit one block of 1,024
}

TEST_CASE(
    "an nn.Parameter as PyTorch 0.3 and 0.4.0 pickled it, its class called on its data, is a "
    "parameter tensor with its requires_grad; a 0.3 Variable a tensor with its own") {
  // _rebuild_tensor_v2(<storage of 6>, 0, (2, 3), (3, 1), False, OrderedDict())
  const std::string tensor = BYTES(
      "ctorch._utils\n_rebuild_tensor_v2\n"
      "((X\x07\x00\x00\x00"
      "storagectorch\nFloatStorage\nX\x01\x00\x00\x00"
      "0X\x03\x00\x00\x00"
      "cpuK\x06tQK\x00K\x02K\x03\x86K\x03K\x01\x86\x89"
      "ccollections\nOrderedDict\n)RtR");
  const std::string kParameter = BYTES(
      "\x80\x02"
      "ctorch.nn.parameter\nParameter\n(");
  std::vector<PickleDocument> kept;  // the values live in their documents' blocks
  const auto root = [&](const std::string& p) {
    kept.push_back(read_pickle(p));
    return kept.back().root;
  };
  SUBCASE("0.4.0: Parameter(tensor, requires_grad)") {
    for (const bool grad : {true, false}) {
      const PickleValue* t = root(kParameter + tensor + (grad ? "\x88" : "\x89") + "tR.");
      REQUIRE(t->kind == Kind::tensor);
      CHECK(t->numel == 6);
      CHECK(t->requires_grad == grad);
      CHECK(t->text == "torch._utils._rebuild_parameter");
    }
  }
  SUBCASE("0.3: Parameter(tensor) then Variable's state (requires_grad, volatile, hooks)") {
    const std::string parameter = kParameter + tensor;
    const PickleValue* frozen = root(parameter + BYTES("tR(\x89\x89Ntb."));
    REQUIRE(frozen->kind == Kind::tensor);
    CHECK_FALSE(frozen->requires_grad);
    CHECK(frozen->text == "torch._utils._rebuild_parameter");
    CHECK(root(parameter + BYTES("tR."))->requires_grad);  // Parameter's default
    // the legacy five: (data, _, hooks, requires_grad, volatile)
    CHECK(root(parameter + BYTES("tR(NNN\x88\x89tb."))->requires_grad);
    const PickleValue* variable = root(BYTES("\x80\x02"
                                             "ctorch.autograd.variable\nVariable\n(") +
                                       tensor + BYTES("tR(\x88\x89Ntb."));
    CHECK(variable->requires_grad);
    CHECK(variable->text == "torch._utils._rebuild_tensor_v2");  // a tensor, not a parameter
  }
  SUBCASE("any other state on a tensor is no pickle torch writes") {
    CHECK_THROWS_AS(read_pickle(kParameter + tensor + BYTES("tR(K\x01K\x02tb.")),
                    UnsupportedPickle);
  }
}
