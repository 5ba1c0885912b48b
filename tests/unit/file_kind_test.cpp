#include <doctest/doctest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <thread>

#include "vin/diagnostics/archive/archive_layout.h"
#include "vin/diagnostics/archive/file_kind.h"
#include "vin/diagnostics/archive/input_file.h"
#include "vin/diagnostics/records/error.h"

using namespace vin::diagnostics;

namespace {

std::string fixture(const std::string& name) { return std::string(VIN_FIXTURE_DIR) + "/" + name; }

std::string contents(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

std::string scratch(const std::string& name, const std::string& bytes) {
  const std::string path = (std::filesystem::temp_directory_path() / name).string();
  std::ofstream(path, std::ios::binary) << bytes;
  return path;
}

// `bytes` written into a pipe by another thread, as a shell's process substitution does: the
// pipe's read end as a path (/dev/fd/N), readable once.
class PipeOf {
 public:
  explicit PipeOf(std::string bytes) : bytes_(std::move(bytes)) {
    REQUIRE(::pipe(fds_) == 0);
    writer_ = std::thread([this] {
      std::size_t done = 0;
      while (done < bytes_.size()) {
        const ssize_t put = ::write(fds_[1], bytes_.data() + done, bytes_.size() - done);
        if (put <= 0) break;
        done += static_cast<std::size_t>(put);
      }
      ::close(fds_[1]);
    });
  }
  ~PipeOf() {
    ::close(fds_[0]);  // a writer still blocked on a full pipe gets EPIPE (SIGPIPE ignored)
    writer_.join();
  }
  std::string path() const { return "/dev/fd/" + std::to_string(fds_[0]); }

 private:
  std::string bytes_;
  int fds_[2] = {-1, -1};
  std::thread writer_;
};

}  // namespace

TEST_CASE(
    "classify_file tells every kind of file the tool reads apart, from its first bytes "
    "and its zip directory") {
  CHECK(classify_file(fixture("convnet.pt")).kind == FileKind::torchscript_archive);
  CHECK(classify_file(fixture("traced.pt")).kind == FileKind::torchscript_archive);
  CHECK(classify_file(fixture("state_dict.pt")).kind == FileKind::torch_save_zip);
  CHECK(classify_file(fixture("inputs/everything_tuple.pt")).kind == FileKind::torch_save_zip);
  CHECK(classify_file(fixture("plain.zip")).kind == FileKind::other_zip);
  CHECK(classify_file(fixture("model_json.pt")).kind == FileKind::legacy_torchscript);
  CHECK(classify_file(fixture("inputs/dtypes.npz")).kind == FileKind::other_zip);
  CHECK(classify_file(fixture("inputs/single.npy")).kind == FileKind::npy);
  CHECK(classify_file(fixture("empty.pt")).kind == FileKind::empty);
  CHECK(classify_file(fixture("text.pt")).kind == FileKind::text);
  const std::string yaml = scratch("vin_file_kind.yaml", "model:\n  depth: 5\n");
  CHECK(classify_file(yaml).kind == FileKind::text);
  const std::string records = scratch("vin_file_kind.jsonl", "\n  {\"record\": \"Header\"}\n");
  CHECK(classify_file(records).kind == FileKind::records);
  const std::string legacy = scratch("vin_file_kind_legacy.pt", "\x80\x02\x8a\x0a");
  CHECK(classify_file(legacy).kind == FileKind::legacy_pickle);
  const std::string preview = scratch("vin_file_kind_preview.pt", "PYTORCH1\x02\x00\x00\x00");
  CHECK(classify_file(preview).kind == FileKind::pytorch1_container);
  std::filesystem::remove(preview);
  std::filesystem::remove(yaml);
  std::filesystem::remove(records);
  std::filesystem::remove(legacy);

  const ClassifiedFile archive = classify_file(fixture("convnet.pt"));
  REQUIRE(archive.zip);
  CHECK(&archive.zip->file() == archive.file.get());  // the zip reads the one opened file
  CHECK_FALSE(archive.file->copied_from_stream());

  CHECK_THROWS_WITH_AS(classify_file(fixture("missing.pt")),
                       (fixture("missing.pt") + ": no such file").c_str(), Error);
  CHECK_THROWS_WITH_AS(classify_file(VIN_FIXTURE_DIR, "a thing"),
                       (std::string(VIN_FIXTURE_DIR) + ": is a directory, not a thing").c_str(),
                       Error);
  CHECK_THROWS_WITH_AS(classify_file(fixture("truncated.pt")),
                       doctest::Contains("truncated.pt: truncated or damaged zip archive"), Error);
}

TEST_CASE("a pipe is read once: copied as it is opened, then read like any file") {
  const std::string bytes = contents(fixture("convnet.pt"));
  PipeOf pipe(bytes);
  const ClassifiedFile file = classify_file(pipe.path());
  CHECK(file.file->copied_from_stream());
  CHECK(file.file->size() == bytes.size());
  CHECK(file.kind == FileKind::torchscript_archive);
  // the probe and a record read seek in the copy; the pipe itself is empty by now
  const ArchiveLayout layout = probe_torchscript_archive(file);
  CHECK(read_archive_record(layout, "data.pkl", 1 << 20).has_value());
  std::string copy(bytes.size(), '\0');
  CHECK(file.file->read_at(0, copy.data(), copy.size()) == bytes.size());
  CHECK(copy == bytes);
}

TEST_CASE("a stream that starts as nothing the tool reads is refused before it is read on") {
  PipeOf zeros(std::string(64, '\0'));
  CHECK_THROWS_WITH_AS(InputFile::open(zeros.path()),
                       doctest::Contains("a stream that starts as none of the files this tool "
                                         "reads"),
                       Error);
  PipeOf text("a: 1\nb: [2, 3]\n");
  const auto file = InputFile::open(text.path());
  CHECK(file->read_all(100, "a test") == "a: 1\nb: [2, 3]\n");
  CHECK_THROWS_WITH_AS(file->read_all(3, "a test"),
                       doctest::Contains("15 bytes is too large for a test"), Error);
}

TEST_CASE("InputFileBuffer reads and seeks the file as a std::istream") {
  const std::string text = "first line\nsecond line\n";
  const std::string path = scratch("vin_input_file_buffer.txt", text);
  const auto file = InputFile::open(path);
  InputFileBuffer buffer(*file);
  std::istream in(&buffer);
  std::string line;
  REQUIRE(std::getline(in, line));
  CHECK(line == "first line");
  in.seekg(0);
  REQUIRE(std::getline(in, line));
  CHECK(line == "first line");
  REQUIRE(std::getline(in, line));
  CHECK(line == "second line");
  CHECK_FALSE(std::getline(in, line));
  in.clear();
  in.seekg(6);
  REQUIRE(std::getline(in, line));
  CHECK(line == "line");
  std::filesystem::remove(path);
}
