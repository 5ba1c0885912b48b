#include <doctest/doctest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <thread>
#include <vector>

#include "fixtures.h"
#include "tar_bytes.h"
#include "vin/diagnostics/torchscript/archive_layout.h"
#include "vin/diagnostics/formats/file_kind.h"
#include "vin/diagnostics/container/input_file.h"
#include "vin/diagnostics/records/error.h"
#include "vin/diagnostics/formats/model_file.h"

using namespace vin::diagnostics;

namespace {

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
  const ArchiveLayout layout = open_torchscript_archive(file);
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

namespace {

// A safetensors file as the format's specification writes it: the header's length (8 bytes,
// little-endian), the JSON header (`header_bytes` long: a metadata note makes up the length, then
// up to 7 spaces of padding), then the data.
std::string safetensors_of(std::size_t header_bytes) {
  const std::string tensor = R"(, "w": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]}})";
  const std::string note = R"({"__metadata__": {"note": ")";
  const std::size_t fill = (header_bytes - note.size() - 2 - tensor.size()) / 8 * 8;
  std::string header = note + std::string(fill, 'n') + "\"}" + tensor;
  REQUIRE(header.size() <= header_bytes);
  header.resize(header_bytes, ' ');
  std::string out;
  for (int b = 0; b < 8; ++b) out += static_cast<char>((header_bytes >> (8 * b)) & 0xFF);
  return out + header + std::string(8, '\0');
}

// A tar (one ustar header per member, its data in 512-byte blocks, two zero blocks at the end).
FileKind kind_of(const std::string& name, const std::string& bytes) {
  return classify_file(scratch(name, bytes)).kind;
}

}  // namespace

TEST_CASE("every file is named for what it is, from its structure (contract 11.1)") {
  // safetensors whatever the first bytes of its header's length are: 0x80 (a pickle's) or PK
  CHECK(kind_of("plain.safetensors", safetensors_of(128)) == FileKind::safetensors);
  CHECK(safetensors_of(0x180)[0] == '\x80');
  CHECK(kind_of("x80.safetensors", safetensors_of(0x180)) == FileKind::safetensors);
  CHECK(safetensors_of(0x4B50).substr(0, 2) == "PK");
  CHECK(kind_of("pk.safetensors", safetensors_of(0x4B50)) == FileKind::safetensors);
  // one cut short is still one (its reader says what is wrong), but not where a zip's
  // signature begins the file and its name does not say safetensors
  std::string cut = safetensors_of(0x4B50);
  cut.resize(1000);
  CHECK(kind_of("cut.safetensors", cut) == FileKind::safetensors);
  CHECK_THROWS_WITH_AS(kind_of("cut.zip", "PK\x03\x04" + cut.substr(4)),
                       doctest::Contains("truncated or damaged zip archive"), Error);
  CHECK(kind_of("cut_zip.safetensors", "PK\x03\x04" + cut.substr(4)) == FileKind::safetensors);
  // a header that does not close is a broken one, by its shape whatever its name, and its
  // reader names the rule it breaks (what_it_is too)
  std::string open = safetensors_of(128);
  open[8 + 127] = 'x';
  CHECK(kind_of("open.safetensors", open) == FileKind::safetensors);
  CHECK(kind_of("open.bin", open) == FileKind::safetensors);
  const ClassifiedFile broken = classify_file(scratch("broken.bin", open));
  CHECK(what_it_is(broken) ==
        "a broken safetensors file (its header is not valid JSON (or not UTF-8))");
  CHECK(what_it_is(classify_file(scratch("whole.bin", safetensors_of(128)))) ==
        "a safetensors file");
  // a length of 2^63: no zero high bytes, but bytes no text has
  std::string absurd = safetensors_of(128);
  absurd.replace(0, 8, std::string("\0\0\0\0\0\0\0\x80", 8));
  CHECK(kind_of("absurd.bin", absurd) == FileKind::safetensors);
  CHECK(what_it_is(classify_file(scratch("absurd.bin", absurd))) ==
        "a broken safetensors file (its header of 9223372036854775808 bytes is larger than the "
        "format's limit of 100,000,000)");
  // a length whose first bytes are "PK", the header not JSON: not a damaged zip
  std::string pk = safetensors_of(0x4B50);
  pk[8 + 2] = '\x01';
  CHECK(kind_of("pk.safetensors", pk) == FileKind::safetensors);
  CHECK(kind_of("pk.bin", pk) == FileKind::safetensors);
  // a header of exactly the format's limit is one (the limit is inclusive), all padding or not
  const std::string limit = std::string("\x00\xe1\xf5\x05\0\0\0\0", 8) + "{}" +
                            std::string(100'000'000 - 2, ' ');
  CHECK(kind_of("limit.bin", limit) == FileKind::safetensors);
  std::filesystem::remove(scratch("limit.bin", ""));
  // the name is a hint where the content is no other format: text, a JSON object without a key
  CHECK(kind_of("text.safetensors", "12345678{\"a\": 1}\n") == FileKind::safetensors);
  CHECK(kind_of("brace.safetensors", "{\x01\x02\x03\x04\x05\x06\x07x") == FileKind::safetensors);
  CHECK(kind_of("notes.safetensors", "a: 1\n") == FileKind::safetensors);
  // ...and content that is clearly another format wins over the name
  CHECK(kind_of("zip.safetensors", contents(fixture("plain.zip"))) == FileKind::other_zip);
  CHECK(kind_of("sd.safetensors", contents(fixture("state_dict.pt"))) ==
        FileKind::torch_save_zip);
  CHECK(kind_of("tar.safetensors", tar_of({"model.safetensors"})) == FileKind::tar);
  CHECK(kind_of("records.safetensors", "{\"record\": \"ModelMetadata\"}\n") ==
        FileKind::records);
  CHECK(kind_of("dict.safetensors", std::string("\x80\x02}q\x00X\x01\x00\x00\x00aK\x01s.", 15)) ==
        FileKind::pickle);
  // an .npy header of 123 bytes puts '{' at byte 8 after binary bytes: its magic wins
  CHECK(kind_of("odd.npy", std::string("\x93NUMPY\x01\x00{\x00", 10) + std::string(123, ' ')) ==
        FileKind::npy);
  // a length past the format's limit is still one (its reader refuses it), not "a zip file";
  // text never has the length's zero high bytes
  std::string huge = safetensors_of(128);
  huge[0] = '\x00';
  huge[1] = '\xc2';
  huge[2] = '\xeb';
  huge[3] = '\x0b';  // 200,000,000
  CHECK(kind_of("huge.safetensors", huge) == FileKind::safetensors);
  CHECK(kind_of("text.json", "12345678{\"a\": 1}\n") != FileKind::safetensors);
  // a Git LFS pointer, named with the size it points to and how to fetch it
  const std::string lfs =
      "version https://git-lfs.github.com/spec/v1\noid "
      "sha256:4d7a214614ab2935c943f9e0ff69d22eadbb8f32b1258daaa5e2ca24d17e2393\nsize 46827520\n";
  const ClassifiedFile pointer = classify_file(scratch("model.safetensors", lfs));
  CHECK(pointer.kind == FileKind::lfs_pointer);
  CHECK(what_it_is(pointer) ==
        "a Git LFS pointer to a file of 46827520 bytes "
        "(sha256:4d7a214614ab2935c943f9e0ff69d22eadbb8f32b1258daaa5e2ca24d17e2393), not the file "
        "itself: fetch it with `git lfs pull`");
  // tar: torch.save's own (PyTorch 0.1-0.3) or any other
  CHECK(kind_of("old.pt", tar_of({"sys_info", "pickle", "tensors", "storages"})) ==
        FileKind::torch_save_tar);
  CHECK(kind_of("weights.tar", tar_of({"model.safetensors"})) == FileKind::tar);
  // 7z, compressed data, pickles that are and are not legacy torch.save files
  CHECK(kind_of("w.7z", std::string("7z\xBC\xAF\x27\x1C\x00\x04", 8) + std::string(40, 'x')) ==
        FileKind::seven_zip);
  CHECK(kind_of("w.pt.gz", std::string("\x1F\x8B\x08\x00", 4) + std::string(40, 'x')) ==
        FileKind::compressed);
  CHECK(kind_of("w.tar.zst", std::string("\x28\xB5\x2F\xFD", 4) + std::string(40, 'x')) ==
        FileKind::compressed);
  CHECK(kind_of("legacy.pt", std::string("\x80\x02\x8a\x0a\x6c\xfc\x9c\x46\xf9\x20\x6a\xa8\x50\x19.",
                                         15)) == FileKind::legacy_pickle);
  CHECK(kind_of("dict.pkl", std::string("\x80\x02}q\x00X\x01\x00\x00\x00aK\x01s.", 15)) ==
        FileKind::pickle);
  // JSON: a sharded checkpoint's index by its first key; records otherwise
  CHECK(kind_of("model.safetensors.index.json",
                "{\n  \"metadata\": {\"total_size\": 8},\n  \"weight_map\": {\"w\": "
                "\"model-00001-of-00001.safetensors\"}\n}\n") == FileKind::weights_index);
  CHECK(kind_of("pytorch_model.bin.index.json", "  {\"weight_map\": {}}") ==
        FileKind::weights_index);
  CHECK(kind_of("m.jsonl", "\xEF\xBB\xBF{\"record\": \"ModelMetadata\"}\n") == FileKind::records);
  CHECK(kind_of("m.json", "{\n  \"model_type\": \"x\"\n}\n") == FileKind::records);
  CHECK(kind_of("notes.yaml", "a: 1\n") == FileKind::text);
}

TEST_CASE("saved records are named as records, and by the command that wrote them") {
  const auto what = [](const std::string& name, const std::string& bytes) {
    const ClassifiedFile file = classify_file(scratch(name, bytes));
    return std::pair(what_it_is(file), saved_records_of(file));
  };
  using Named = std::pair<std::string, std::optional<std::string>>;
  CHECK(what("m.jsonl", "\xEF\xBB\xBF{\"record\": \"ModelMetadata\", \"model_type\": null}\n") ==
        Named{"saved records (jsonl, as inspect-model writes)", "inspect-model"});
  CHECK(what("c.jsonl", "{\"record\": \"ModelStructureSpec\"}\n") ==
        Named{"saved records (jsonl, as inspect-config writes)", "inspect-config"});
  CHECK(what("p.jsonl", "{\"record\": \"ModuleProfile\"}\n").second == "profile");
  CHECK(what("d.jsonl", "{\"record\": \"Change\"}\n").second == "diff");
  CHECK(what("s.jsonl", "{\"record\": \"TensorSnapshot\"}\n").second == "capture");
  CHECK(what("t.jsonl", "{\"record\": \"TensorComparison\"}\n").second == "compare");
  CHECK(what("n.jsonl", "{\"record\": \"SomethingNewer\"}\n") ==
        Named{"saved records (jsonl)", ""});
  CHECK(what("m.json", "{\n  \"model_type\": \"x\",\n  \"modules\": []\n}\n") ==
        Named{"saved records (a --format json document, as inspect-model writes)",
              "inspect-model"});
  CHECK(what("c.json", "{\n  \"config_type\": null\n}\n").second == "inspect-config");
  CHECK(what("d.json", "{\n  \"kind\": \"model\"\n}\n").second == "diff");
  // other JSON is named JSON (YAML reads it as a mapping: inspect-config takes it)
  CHECK(what("other.json", "{\"a\": 1}") == Named{"a JSON file", std::nullopt});
  CHECK(what("nokey.json", "{ [1] }") == Named{"a JSON file", std::nullopt});
}
