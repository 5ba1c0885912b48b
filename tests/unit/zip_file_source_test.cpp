#include <doctest/doctest.h>
#include <zip.h>

#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "vin/diagnostics/archive/zip_file_source.h"
#include "vin/diagnostics/archive/zip_handle.h"

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

std::string read_all(zip_t* z, zip_uint64_t index) {
  zip_stat_t st;
  REQUIRE(zip_stat_index(z, index, 0, &st) == 0);
  ZipFileHandle file(zip_fopen_index(z, index, 0));
  REQUIRE(file);
  std::string bytes(st.size, '\0');
  REQUIRE(zip_fread(file.get(), bytes.data(), st.size) == static_cast<zip_int64_t>(st.size));
  return bytes;
}

}  // namespace

TEST_CASE(
    "open_zip_file reads what libzip wrote: many small members, and members larger than "
    "its window, with every local header checked") {
  const std::string path =
      (std::filesystem::temp_directory_path() / "vin_zip_file_source_test.zip").string();
  std::vector<std::pair<std::string, std::string>> members;
  for (int i = 0; i < 3000; ++i)  // local headers close together: read through the window
    members.emplace_back("small/" + std::to_string(i), std::string(1 + i % 97, char('a' + i % 26)));
  std::string large(300 * 1024, '\0');  // larger than the window: read past it
  for (std::size_t i = 0; i < large.size(); ++i)
    large[i] = static_cast<char>(i * 2654435761u >> 13);
  members.emplace_back("large", large);
  members.emplace_back("after_large", "the member behind the large one");
  write_zip(path, members);

  int code = -1;
  ZipHandle z(open_zip_file(path, ZIP_RDONLY | ZIP_CHECKCONS, &code));
  REQUIRE(z);
  REQUIRE(zip_get_num_entries(z.get(), 0) == static_cast<zip_int64_t>(members.size()));
  // out of order, so the window moves backwards as well as forwards
  for (std::size_t i : {members.size() - 1, std::size_t{0}, members.size() - 2, std::size_t{1500}})
    CHECK(read_all(z.get(), i) == members[i].second);
  for (std::size_t i = 0; i < members.size(); ++i) {
    CHECK(zip_get_name(z.get(), i, 0) == members[i].first);
    CHECK(read_all(z.get(), i) == members[i].second);
  }
  z.reset();

  SUBCASE("a missing file, or a cut one, is refused with libzip's codes") {
    CHECK(open_zip_file(path + ".missing", ZIP_RDONLY, &code) == nullptr);
    CHECK(code == ZIP_ER_OPEN);
    std::filesystem::resize_file(path, 1000);
    CHECK(open_zip_file(path, ZIP_RDONLY | ZIP_CHECKCONS, &code) == nullptr);
    CHECK(code != ZIP_ER_OK);
  }
  std::filesystem::remove(path);
}
