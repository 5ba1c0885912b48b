// Where the generated fixture archives live (tests/fixtures/make_fixtures.py, run by CTest's
// setup).
#pragma once

#include <string>

inline std::string fixture(const std::string& name) {
  return std::string(VIN_FIXTURE_DIR) + "/" + name;
}
