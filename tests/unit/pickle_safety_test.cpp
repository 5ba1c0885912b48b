#include <doctest/doctest.h>

#include <string>

#include "vin/diagnostics/pickle_safety.h"

using vin::diagnostics::pickle_problem;
using vin::diagnostics::PickleLimits;

namespace {

// a tuple nested `depth` deep: MARK x depth, EMPTY_TUPLE, TUPLE x depth
std::string nested(std::size_t depth) {
  return "\x80\x02" + std::string(depth, '(') + ")" + std::string(depth, 't') + ".";
}

// t0 = 1; t(i+1) = (t(i), t(i)), each level memoised and referenced twice: t(k) reaches
// 2^(k+1) - 1 values
std::string doubled(int times) {
  std::string p("\x80\x02K\x01q\x00", 6);  // 1, PUT 0
  for (int i = 0; i < times; ++i) {
    const char memo = static_cast<char>(i), next = static_cast<char>(i + 1);
    p += std::string("h") + memo + "h" + memo + "\x86q" + next + "0";  // GET GET TUPLE2 PUT POP
  }
  return p + "h" + static_cast<char>(times) + ".";
}

}  // namespace

TEST_CASE("nesting is bounded: at the limit accepted, one past it refused") {
  PickleLimits limits;
  limits.max_nesting = 100;
  CHECK_FALSE(pickle_problem(nested(99), limits).has_value());  // 100 levels with the innermost
  const auto problem = pickle_problem(nested(100), limits);
  REQUIRE(problem.has_value());
  CHECK(problem->find("nests values more than 100 deep") != std::string::npos);
  // the default limit refuses what overflowed LibTorch's recursive destructor
  CHECK(pickle_problem(nested(300000)).has_value());
}

TEST_CASE("shared containers are counted at every reference") {
  PickleLimits limits;
  limits.max_expanded = 1000;
  CHECK_FALSE(pickle_problem(doubled(8), limits).has_value());  // 2^9 - 1 + ... < 1000
  const auto problem = pickle_problem(doubled(10), limits);
  REQUIRE(problem.has_value());
  CHECK(problem->find("expand to more than 1000 values") != std::string::npos);
  CHECK(pickle_problem(doubled(30)).has_value());  // 2^30 with the default limit
}

TEST_CASE("values are counted, memo reads must match a PUT, type tags are bounded") {
  PickleLimits limits;
  limits.max_values = 10;
  const std::string nones = "\x80\x02(" + std::string(11, 'N') + "l.";
  CHECK(pickle_problem(nones, limits).value().find("makes more than 10 values") !=
        std::string::npos);
  CHECK(pickle_problem(std::string("\x80\x02h\x05.", 5)).value() ==
        "opcode 0x68 at byte 2 reads memo entry 5, which no PUT made");
  const auto tag = [](const std::string& type) {
    return "\x80\x02" "ctorch.jit._pickle\nrestore_type_tag\n]X" +
           std::string(1, static_cast<char>(type.size())) + std::string(3, '\0') + type + "\x86R.";
  };
  CHECK_FALSE(pickle_problem(tag("Dict[str, List[int]]")).has_value());
  std::string type;
  for (int i = 0; i < 33; ++i) type += "List[";
  type += "int" + std::string(33, ']');
  CHECK(pickle_problem(tag(type)).value().find("restore_type_tag a type nested more than 32") !=
        std::string::npos);
  // the same string elsewhere is only a string
  const std::string plain = "\x80\x02X" + std::string(1, static_cast<char>(type.size())) +
                            std::string(3, '\0') + type + ".";
  CHECK_FALSE(pickle_problem(plain).has_value());
}
