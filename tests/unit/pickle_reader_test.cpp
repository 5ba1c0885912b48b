#include <doctest/doctest.h>

#include <string>

#include "vin/diagnostics/archive/pickle_reader.h"
#include "vin/diagnostics/plugin/torch_plugin.h"
#include "vin/diagnostics/records/error.h"

using namespace vin::diagnostics;
using Kind = PickleValue::Kind;

namespace {

// (a hex escape swallows every hex digit after it: "\x00" "aq" keeps the 'a' a letter)
std::string bytes(const char* text, std::size_t n) { return std::string(text, n); }
#define BYTES(literal) bytes(literal, sizeof(literal) - 1)

}  // namespace

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
                       "vin-inspect-torch)",
                       Error);
}
