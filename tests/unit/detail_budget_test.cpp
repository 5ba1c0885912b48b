#include <doctest/doctest.h>

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
