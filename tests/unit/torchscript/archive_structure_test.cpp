#include <torch/script.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "fixtures.h"
#include "records_printing.h"
#include "vin/diagnostics/torchscript/archive_structure.h"
#include "vin/diagnostics/records/error.h"
#include "vin/diagnostics/torch/inspect_model.h"
#include "vin/diagnostics/formats/model_file.h"

#include "doctest_after_torch.h"  // last: after glog's CHECK macros

using namespace vin::diagnostics;

namespace {

// every archive the fixture scripts write (inputs and non-archives are not archives; diff/: the
// half, double, retrained and edited copies of one model), and those
// in the folders of VIN_EXTRA_ARCHIVE_DIRS (colon-separated; e.g. the zoo's exported archives)
std::vector<std::string> fixture_archives() {
  std::vector<std::string> dirs{VIN_FIXTURE_DIR, VIN_FIXTURE_DIR "/diff", VIN_CAPTURE_FIXTURE_DIR};
  if (const char* extra = std::getenv("VIN_EXTRA_ARCHIVE_DIRS")) {
    std::string list(extra);
    for (std::size_t start = 0, end; start <= list.size(); start = end + 1) {
      end = std::min(list.find(':', start), list.size());
      if (end > start) dirs.push_back(list.substr(start, end - start));
    }
  }
  std::vector<std::string> paths;
  for (const std::string& dir : dirs)
    for (const auto& entry : std::filesystem::directory_iterator(dir))
      if (entry.path().extension() == ".pt" && entry.is_regular_file())
        paths.push_back(entry.path());
  return paths;
}

// The records as LibTorch gives them after loading on the CPU: the archive reader reports the
// device each storage was saved on (cuda_tensors.pt: cuda:0), LibTorch where it loaded it.
ModelMetadata as_loaded_on_cpu(const ModelMetadata& model) {
  std::vector<ModuleMetadata> modules;
  for (const ModuleMetadata& m : model.modules()) {
    ModuleDetails details = m.details();
    if (details.tensors)
      for (TensorMetadata& t : *details.tensors) t.device = "cpu";
    modules.emplace_back(m.path(), m.module_type(), m.direct_parameters(), m.trainable_parameters(),
                         m.direct_buffers(), m.training(), std::move(details));
  }
  return ModelMetadata(model.model_type(), model.total_parameters(), model.trainable_parameters(),
                       std::move(modules), model.details());
}

// Both readers on every fixture archive: the records LibTorch's loaded module gives and the ones
// the archive reader gives without LibTorch must be identical, with `details` or without.
void check_readers_agree(const InspectDetails& details) {
  std::size_t compared = 0;
  for (const std::string& path : fixture_archives()) {
    CAPTURE(path);
    std::optional<ModelMetadata> expected;
    try {
      expected = describe_with_libtorch(path, details);
    } catch (const Error&) {
    }
    std::optional<ModelMetadata> structure;
    std::string why_not;
    try {
      structure = read_archive_metadata(open_torchscript_archive(path), details, &why_not);
    } catch (const Error&) {
      CHECK_FALSE(expected.has_value());  // both refuse a file that is not an archive
      continue;
    }
    if (!expected) continue;  // e.g. newer_version.pt: LibTorch cannot load it
    if (!structure) {
      MESSAGE("fell back to LibTorch: " << why_not);
      continue;
    }
    CHECK(as_loaded_on_cpu(*structure) == *expected);
    ++compared;
  }
  CHECK(compared >= 24);
}

}  // namespace

TEST_CASE("the archive reader gives LibTorch's records on every fixture archive") {
  check_readers_agree({});
}

TEST_CASE("with --all's details too: tensors, attributes and constants, signatures") {
  check_readers_agree(InspectDetails::everything());
}
