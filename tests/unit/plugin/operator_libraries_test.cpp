#include "vin/diagnostics/plugin/operator_libraries.h"

#include <doctest/doctest.h>

#include <string>

#include "vin/diagnostics/records/error.h"

using namespace vin::diagnostics;

TEST_CASE("VIN_INSPECT_LIBRARIES is split at colons, empty entries left out") {
  CHECK(split_library_list("") == std::vector<std::string>{});
  CHECK(split_library_list("a.so") == std::vector<std::string>{"a.so"});
  CHECK(split_library_list(":/x/a.so::b.so:") == std::vector<std::string>{"/x/a.so", "b.so"});
}

namespace {
std::string load_error(const std::string& path) {
  try {
    load_operator_libraries({path}, "9.9.9");
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}
}  // namespace

TEST_CASE("an operator library that cannot be loaded is named with the loader's reason") {
  CHECK(load_error("/nonexistent/ops.so") ==
        "/nonexistent/ops.so: cannot load this operator library: no such file");
  CHECK(load_error("/") == "/: cannot load this operator library: not a regular file");
  const std::string not_elf = load_error(VIN_HOSTILE_DIR "/make_attacks.py");
  CHECK(not_elf.find(": cannot load this operator library: ") != std::string::npos);
  CHECK(not_elf.find(VIN_HOSTILE_DIR "/make_attacks.py") == 0);
}

TEST_CASE("a loadable library loads, twice too") {
  // any shared object does: zlib's (VIN_SHARED_LIBRARY, found by CMake)
  CHECK_NOTHROW(load_operator_libraries({VIN_SHARED_LIBRARY, VIN_SHARED_LIBRARY}, "9.9.9"));
  CHECK_NOTHROW(load_operator_libraries({}, "9.9.9"));
}
