#include <torch/script.h>

#include <filesystem>
#include <string>
#include <vector>

#include "fixtures.h"
#include "records_printing.h"
#include "vin/diagnostics/archive/archive_structure.h"
#include "vin/diagnostics/records/error.h"
#include "vin/diagnostics/torch/inspect_model.h"

#include "doctest_after_torch.h"  // last: after glog's CHECK macros

using namespace vin::diagnostics;

namespace {

// every archive the fixture scripts write (inputs and non-archives are not archives)
std::vector<std::string> fixture_archives() {
  std::vector<std::string> paths;
  for (const char* dir : {VIN_FIXTURE_DIR, VIN_CAPTURE_FIXTURE_DIR})
    for (const auto& entry : std::filesystem::directory_iterator(dir))
      if (entry.path().extension() == ".pt" && entry.is_regular_file())
        paths.push_back(entry.path());
  return paths;
}

}  // namespace

TEST_CASE("the archive reader gives LibTorch's records on every fixture archive") {
  std::size_t compared = 0;
  for (const std::string& path : fixture_archives()) {
    CAPTURE(path);
    std::optional<ModelMetadata> expected;
    try {
      expected = describe_with_libtorch(path);
    } catch (const Error&) {
    }
    std::optional<ModelMetadata> structure;
    std::string why_not;
    try {
      structure = read_archive_metadata(path, &why_not);
    } catch (const Error&) {
      CHECK_FALSE(expected.has_value());  // both refuse a file that is not an archive
      continue;
    }
    if (!expected) continue;  // e.g. newer_version.pt: LibTorch cannot load it
    if (!structure) {
      MESSAGE("fell back to LibTorch: " << why_not);
      continue;
    }
    CHECK(*structure == *expected);
    ++compared;
  }
  CHECK(compared >= 24);
}
