#include <doctest/doctest.h>

#include <algorithm>
#include <string>

#include "vin/diagnostics/records/detail_budget.h"

using namespace vin::diagnostics;

TEST_CASE("the detail budget is 64 MiB or 8 bytes per byte read, and grows as records are read") {
  DetailBudget small(1000);
  CHECK(small.bytes() == kMinDetailBytes);
  DetailBudget large(std::uint64_t{100} << 20);
  CHECK(large.bytes() == (std::uint64_t{800} << 20));
  DetailBudget growing;
  growing.read(std::uint64_t{10} << 20);
  growing.read(std::uint64_t{10} << 20);
  CHECK(growing.bytes() == (std::uint64_t{160} << 20));
  DetailBudget huge(~std::uint64_t{0});  // saturates, never wraps
  CHECK(huge.bytes() == ~std::uint64_t{0});
}

TEST_CASE("values past the budget are given by their type, and the budget says why") {
  DetailBudget budget;
  const std::string mebibyte(std::size_t{1} << 20, 'x');
  for (int i = 0; i < 63; ++i) CHECK(budget.admit(Json(mebibyte)) == Json(mebibyte));
  CHECK_FALSE(budget.stopped_by());
  CHECK(budget.admit(Json(mebibyte + mebibyte)) == type_marker("builtins.str"));
  REQUIRE(budget.stopped_by());
  CHECK(*budget.stopped_by() == "detail_budget");
  CHECK(budget.admit(Json(1)) == Json(1));  // what still fits is printed
  CHECK(budget.admit(Json::array({mebibyte, mebibyte})) == type_marker("builtins.list"));
  TensorMetadata t;
  t.shape.assign(std::size_t{1} << 20, 1);  // 8 MiB of dimensions
  CHECK_FALSE(budget.admit(t));
}

TEST_CASE("printed_size counts strings, containers and keys, and stops past its limit") {
  CHECK(printed_size(Json("abc"), 100) == 5);
  CHECK(printed_size(Json::object({{"k", 1}}), 100) == 2 + 1 + 4 + 8);
  Json wide = Json::array();
  for (int i = 0; i < 100000; ++i) wide.push_back(i);
  CHECK(printed_size(wide, 1000) > 1000);
  CHECK(printed_size(Json::array({1, "ab"}), 100) == 2 + 2 + 8 + 4);
}

TEST_CASE("a value many modules name is built no further than the room, and once past it") {
  DetailBudget budget;  // 64 MiB
  const std::string mebibyte(std::size_t{1} << 20, 'x');
  int builds = 0;
  std::uint64_t widest_room = 0;
  // a shared value of 20 MiB: three modules print it, the fourth finds no room
  const auto twenty = [&](std::uint64_t limit, bool& fits) {
    ++builds;
    widest_room = std::max(widest_room, limit);
    PrintRoom room{limit};
    Json value = Json::array();
    for (int i = 0; i < 20; ++i) {
      if (!room.spend(mebibyte.size() + 3)) {
        fits = false;
        return type_marker("builtins.list");
      }
      value.push_back(mebibyte);
    }
    return value;
  };
  static const int source = 0;
  for (int module = 0; module < 3; ++module)
    CHECK(budget.admit_shared(&source, twenty).is_array());
  CHECK_FALSE(budget.stopped_by());
  for (int module = 3; module < 500; ++module)
    CHECK(budget.admit_shared(&source, twenty) == type_marker("builtins.list"));
  CHECK(builds == 3);  // not 500: its size learnt, it is not built once past the room
  CHECK(widest_room == std::uint64_t{64} << 20);
  // a value past the whole budget: its one build stops at the room, and is never tried again
  DetailBudget fresh;
  builds = 0;
  const auto hundred = [&](std::uint64_t limit, bool& fits) {
    ++builds;
    PrintRoom room{limit};
    fits = room.spend(std::uint64_t{100} << 20);
    return fits ? Json::array() : type_marker("builtins.list");
  };
  for (int module = 0; module < 500; ++module)
    CHECK(fresh.admit_shared(&source, hundred) == type_marker("builtins.list"));
  CHECK(builds == 1);
  REQUIRE(budget.stopped_by());
  CHECK(*budget.stopped_by() == "detail_budget");
  // another source that still fits is printed
  static const int small = 0;
  CHECK(budget.admit_shared(&small, [](std::uint64_t, bool&) { return Json(1); }) == Json(1));
}

TEST_CASE("PrintRoom spends what printed_size counts and refuses past its room") {
  PrintRoom room{10};
  CHECK(room.spend(8));
  CHECK_FALSE(room.spend(3));
  CHECK(room.spend(2));
  CHECK(room.left == 0);
}
