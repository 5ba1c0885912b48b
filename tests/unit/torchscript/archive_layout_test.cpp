#include <doctest/doctest.h>

#include <string>

#include "fixtures.h"
#include "vin/diagnostics/torchscript/archive_layout.h"
#include "vin/diagnostics/records/error.h"
#include "vin/diagnostics/formats/model_file.h"

using namespace vin::diagnostics;

namespace {

// The message open_torchscript_archive gives for `file`, or "" when it accepts it.
std::string probe_error(const std::string& file) {
  try {
    open_torchscript_archive(file);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("a TorchScript archive: its record folder and format version") {
  const ArchiveLayout layout = open_torchscript_archive(fixture("everything.pt"));
  CHECK(layout.record_prefix == "everything/");
  CHECK(layout.format_version == 3);
  CHECK(open_torchscript_archive(fixture("newer_version.pt")).format_version == 99);
}

TEST_CASE("each wrong file gets a message naming the file and what it is") {
  const std::string dir = fixture("");
  CHECK(probe_error(fixture("missing.pt")) == fixture("missing.pt") + ": no such file");
  CHECK(probe_error(VIN_FIXTURE_DIR) ==
        std::string(VIN_FIXTURE_DIR) + ": is a directory, not a TorchScript archive");
  CHECK(probe_error(fixture("empty.pt")) ==
        fixture("empty.pt") + ": empty file, not a TorchScript archive");
  CHECK(probe_error(fixture("text.pt")) ==
        fixture("text.pt") +
            ": a text file, not a TorchScript archive; torch.jit.save writes zip archives");
  CHECK(probe_error(fixture("truncated.pt")) ==
        fixture("truncated.pt") +
            ": truncated or damaged zip archive (its directory at the end is missing)");
  CHECK(probe_error(fixture("plain.zip")) ==
        fixture("plain.zip") + ": a zip archive without data.pkl, not a TorchScript archive");
  const std::string state_dict = probe_error(fixture("state_dict.pt"));
  CHECK(state_dict.rfind(fixture("state_dict.pt") + ": a torch.save file", 0) == 0);
  CHECK(state_dict.find("torch.jit.save(torch.jit.script(model), path)") != std::string::npos);
}

TEST_CASE("pickles whose sizes LibTorch would trust are refused before it loads them") {
  CHECK_NOTHROW(check_archive_records(open_torchscript_archive(fixture("convnet.pt"))));
  const std::string memo = std::string(VIN_HOSTILE_DIR) + "/archive/memo_index_huge.pt";
  CHECK_THROWS_WITH_AS(
      check_archive_records(open_torchscript_archive(memo)),
      (memo + ": the record data.pkl cannot be read safely: memo index 2147483647 at byte "
              "3 is larger than a pickle of 448 bytes can use")
          .c_str(),
      Error);
  const std::string debug = std::string(VIN_HOSTILE_DIR) + "/archive/debug_pkl_length_huge.pt";
  CHECK_THROWS_WITH_AS(
      check_archive_records(open_torchscript_archive(debug)),
      doctest::Contains("code/__torch__/fixture_models.py.debug_pkl cannot be read safely: "
                        "a length of 4294967295 bytes at byte 2 runs past"),
      Error);
}
