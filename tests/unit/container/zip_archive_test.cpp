#include <doctest/doctest.h>
#include <zip.h>

#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "vin/diagnostics/container/zip_archive.h"
#include "vin/diagnostics/records/error.h"

using namespace vin::diagnostics;

namespace {

// A zip written by libzip's own writer: `members` (name, bytes), deflated or stored alternately.
void write_zip(const std::string& path,
               const std::vector<std::pair<std::string, std::string>>& members) {
  int code = 0;
  zip_t* z = zip_open(path.c_str(), ZIP_CREATE | ZIP_TRUNCATE, &code);
  REQUIRE(z != nullptr);
  for (std::size_t i = 0; i < members.size(); ++i) {
    const auto& [name, bytes] = members[i];
    zip_source_t* s = zip_source_buffer(z, bytes.data(), bytes.size(), 0);
    REQUIRE(s != nullptr);
    const zip_int64_t index = zip_file_add(z, name.c_str(), s, 0);
    REQUIRE(index >= 0);
    REQUIRE(zip_set_file_compression(z, static_cast<zip_uint64_t>(index),
                                     i % 2 ? ZIP_CM_DEFLATE : ZIP_CM_STORE, 0) == 0);
  }
  REQUIRE(zip_close(z) == 0);  // the buffers are read here, so `members` must still be alive
}

}  // namespace

TEST_CASE(
    "ZipArchive reads what libzip wrote: many small members, and members larger than its "
    "window, with every local header checked") {
  const std::string path =
      (std::filesystem::temp_directory_path() / "vin_zip_archive_test.zip").string();
  std::vector<std::pair<std::string, std::string>> members;
  for (int i = 0; i < 3000; ++i)  // local headers close together: read through the window
    members.emplace_back("small/" + std::to_string(i), std::string(1 + i % 97, char('a' + i % 26)));
  std::string large(300 * 1024, '\0');  // larger than the window: read past it
  for (std::size_t i = 0; i < large.size(); ++i)
    large[i] = static_cast<char>(i * 2654435761u >> 13);
  members.emplace_back("large", large);
  members.emplace_back("after_large", "the member behind the large one");
  write_zip(path, members);

  {
    const ZipArchive zip(InputFile::open(path));
    REQUIRE(zip.entries().size() == members.size());
    // out of order, so the window moves backwards as well as forwards
    for (std::size_t i :
         {members.size() - 1, std::size_t{0}, members.size() - 2, std::size_t{1500}})
      CHECK(zip.read(i, 1 << 20, "m") == members[i].second);
    for (std::size_t i = 0; i < members.size(); ++i) {
      CHECK(zip.entries()[i].name == members[i].first);
      CHECK(zip.find(members[i].first) == i);
      CHECK(zip.read(i, 1 << 20, "m") == members[i].second);
    }
    CHECK(zip.first_folder() == "small/");
    CHECK(zip.has_entry_under("small/"));
    CHECK_FALSE(zip.find("absent"));
    CHECK_FALSE(zip.read(std::string("absent"), 10));
    CHECK_THROWS_WITH_AS(zip.read(members.size() - 2, 1000, "large"),
                         (path + ": the record large is larger than 1000 bytes").c_str(), Error);
    // piece by piece, as the .npz reader streams a member
    ZipArchive::Member member = zip.open(members.size() - 2, "large");
    std::string streamed(large.size(), '\0');
    CHECK(member.read(streamed.data(), 1000) == 1000);
    CHECK(member.read(streamed.data() + 1000, large.size() - 1000) == large.size() - 1000);
    CHECK(streamed == large);
    CHECK(member.at_end());
  }

  SUBCASE("a missing file, or a cut one, is refused naming the file") {
    CHECK_THROWS_WITH_AS(ZipArchive(InputFile::open(path + ".missing")),
                         (path + ".missing: no such file").c_str(), Error);
    std::filesystem::resize_file(path, 1000);
    CHECK_THROWS_WITH_AS(ZipArchive(InputFile::open(path)),
                         doctest::Contains(": truncated or damaged zip archive"), Error);
  }
  std::filesystem::remove(path);
}

TEST_CASE("zip_member_problem: stored and deflated members with sizes they can hold only") {
  CHECK_FALSE(zip_member_problem(ZIP_CM_STORE, 10, 10));
  CHECK(zip_member_problem(ZIP_CM_STORE, 11, 10) ==
        "it is stored uncompressed, but declares 11 bytes for 10");
  CHECK_FALSE(zip_member_problem(ZIP_CM_DEFLATE, 1032 * 10, 10));
  CHECK(zip_member_problem(ZIP_CM_DEFLATE, 1032 * 11, 10).has_value());
  CHECK(zip_member_problem(ZIP_CM_BZIP2, 10, 10)->find("method 12") != std::string::npos);
}
