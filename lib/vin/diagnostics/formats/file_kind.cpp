#include "vin/diagnostics/formats/file_kind.h"

#include <algorithm>
#include <cctype>
#include <cstring>
#include <iterator>
#include <optional>
#include <vector>

#include "vin/diagnostics/export/export_archive.h"
#include "vin/diagnostics/safetensors/safetensors_file.h"
#include "vin/diagnostics/container/tar_archive.h"
#include "vin/diagnostics/records/error.h"
#include "vin/diagnostics/text/printable.h"

namespace vin::diagnostics {
namespace {

// The first member of the JSON object a text file starts with (after white space and a UTF-8
// byte-order mark, which editors on Windows write before jsonl too): its key ("" for an object
// whose first key is not within the first 64 KiB) and, where the value is a short string, that
// string (a jsonl record's name: `{"record": "ModelMetadata", ...`); nothing when the first byte
// that is not white space is not '{' (reads no further than that byte, or the member).
struct FirstMember {
  std::string key;
  std::string text;
};
std::optional<FirstMember> first_object_member(const InputFile& file) {
  std::vector<char> chunk(64 * 1024);
  const std::uint64_t start = file.starts_with("\xEF\xBB\xBF") ? 3 : 0;
  const std::size_t got = file.read_at(start, chunk.data(), chunk.size());
  std::size_t i = 0;
  const auto skip_space = [&] {
    while (i < got && std::isspace(static_cast<unsigned char>(chunk[i]))) ++i;
  };
  skip_space();
  if (i == got) {  // white space to the end of the chunk: look on for the first byte
    for (std::uint64_t at = start + got; at < file.size(); at += got) {
      const std::size_t more = file.read_at(at, chunk.data(), chunk.size());
      for (std::size_t k = 0; k < more; ++k)
        if (!std::isspace(static_cast<unsigned char>(chunk[k])))
          return chunk[k] == '{' ? std::optional<FirstMember>(FirstMember{}) : std::nullopt;
      if (more == 0) break;
    }
    return std::nullopt;
  }
  if (chunk[i] != '{') return std::nullopt;
  ++i;
  FirstMember out;
  // a string without escapes from chunk[i], the opening quote; "" where there is none
  const auto plain_string = [&]() -> std::string {
    if (i == got || chunk[i] != '"') return "";
    const std::size_t begin = ++i;
    while (i < got && chunk[i] != '"' && chunk[i] != '\\') ++i;
    if (i == got || chunk[i] != '"') return "";
    return std::string(chunk.data() + begin, i++ - begin);
  };
  skip_space();
  out.key = plain_string();
  if (out.key.empty()) return out;
  skip_space();
  if (i == got || chunk[i++] != ':') return out;
  skip_space();
  out.text = plain_string();
  return out;
}

// The command whose records (jsonl or --format json) a file holds, told by the first record's
// name (jsonl) or the document's first key (json); nothing for other JSON.
std::optional<std::string_view> records_writer(const FirstMember& first) {
  struct Writer {
    std::string_view first;  // a record's name, or a document's first key
    std::string_view command;
  };
  static constexpr Writer kJsonl[] = {
      {"ModelMetadata", "inspect-model"},   {"WeightsFile", "inspect-model"},
      {"ExportArchive", "inspect-model"},   {"CheckpointValue", "inspect-model"},
      {"ModuleMetadata", "inspect-model"},  {"ModelStructureSpec", "inspect-config"},
      {"ConfigFieldSpec", "inspect-config"}, {"ModuleProfile", "profile"},
      {"OperatorProfile", "profile"},       {"ProfileSummary", "profile"},
      {"Change", "diff"},                   {"DiffSummary", "diff"},
      {"TensorSnapshot", "capture"},        {"CaptureSummary", "capture"},
      {"TensorComparison", "compare"},      {"ComparisonSummary", "compare"}};
  // the first key of each --format json document (output_format.cpp writes them)
  static constexpr Writer kJson[] = {
      {"model_type", "inspect-model"}, {"export_archive", "inspect-model"},
      {"config_type", "inspect-config"}, {"modules", "profile"},
      {"kind", "diff"},                {"snapshots", "capture"},
      {"comparisons", "compare"}};
  if (first.key == "record") {
    for (const Writer& w : kJsonl)
      if (w.first == first.text) return w.command;
    return std::string_view();  // a record of a kind this version does not write: records still
  }
  for (const Writer& w : kJson)
    if (w.first == first.key) return w.command;
  return std::nullopt;
}

// safetensors: an 8-byte little-endian header length N, then N bytes of a JSON object (padded
// with spaces), then the data. Told by the length fitting the file and the braces at both ends
// of the header, not by the first bytes, which are the length's (0x80 or `PK` among them).
bool is_safetensors(const InputFile& file) {
  const std::string_view head = file.head();
  if (head.size() < 10 || !starts_like_safetensors(head)) return false;
  std::uint64_t length = 0;
  for (int b = 7; b >= 0; --b) length = length << 8 | static_cast<unsigned char>(head[b]);
  if (length < 2) return false;
  // a header past the end: a safetensors file cut short (or one whose length is past the
  // format's limit), where nothing else begins so (a zip's signatures); the reader says which
  if (length > file.size() - 8)
    return !file.starts_with("PK\x03\x04") && !file.starts_with("PK\x05\x06");
  // the header's last byte that is not padding closes it (a MiB of padding at most is looked at)
  char piece[4096];
  for (std::uint64_t end = 8 + length; end > 9 && 8 + length - end < (1 << 20);) {
    const std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(sizeof piece, end - 9));
    const std::size_t got = file.read_at(end - n, piece, n);
    if (got != n) return false;
    for (std::size_t k = n; k > 0; --k)
      if (piece[k - 1] != ' ') return piece[k - 1] == '}';
    end -= n;
  }
  return false;
}

// A safetensors file that breaks the format's rules, told by its shape: the header's '{' at
// byte 8 after a length whose high four bytes are zero (under 4 GiB) or that holds bytes no
// text has (2^63's zeros). Its reader then names the rule it breaks (a header past the limit,
// JSON that does not close) instead of the file falling through to "not a zip file". A zip's
// own signature wins: a zip's local header never has zeros then '{' there, but a zip cut short
// is a damaged zip, as its reader says.
bool shaped_like_safetensors(const InputFile& file) {
  const std::string_view head = file.head();
  if (head.size() < 9 || head[8] != '{') return false;
  if (file.starts_with("PK\x03\x04") || file.starts_with("PK\x05\x06")) return false;
  const bool binary = std::any_of(head.begin(), head.begin() + 8, [](char c) {
    const auto b = static_cast<unsigned char>(c);
    return b < 0x09 || (b > 0x0d && b < 0x20) || b == 0x7f;
  });
  return binary || starts_like_safetensors(head);
}

// Whether `path` is named as a safetensors file (`model.safetensors`): a hint, taken only where
// the content is clearly nothing else (what classify_file says).
bool named_safetensors(std::string_view path) {
  constexpr std::string_view kSuffix = ".safetensors";
  if (path.size() < kSuffix.size()) return false;
  const std::string_view tail = path.substr(path.size() - kSuffix.size());
  return std::equal(tail.begin(), tail.end(), kSuffix.begin(), [](char a, char b) {
    return std::tolower(static_cast<unsigned char>(a)) == b;
  });
}

// The pickled magic number legacy torch.save files begin with (0x1950a86a20f9469cfc6c, a LONG1
// of 10 bytes, protocol 2 by default), or its start where the file is cut short.
bool is_legacy_torch_save(const InputFile& file) {
  return file.starts_with("\x80\x02\x8a\x0a") ||
         file.head().find("\x8a\x0a\x6c\xfc\x9c\x46\xf9\x20\x6a\xa8\x50\x19") !=
             std::string_view::npos;
}

bool starts_compressed(const InputFile& file) {
  return file.starts_with("\x1F\x8B") || file.starts_with("BZh") ||
         file.starts_with("\xFD\x37\x7A\x58\x5A\x00") || file.starts_with("\x28\xB5\x2F\xFD");
}

constexpr std::string_view kLfsPointer = "version https://git-lfs.github.com/spec/";

FileKind zip_kind(const ZipArchive& zip) {
  // PyTorch's writers put every record under one top folder, the first member's
  if (export_layout(zip)) return FileKind::torch_export;
  const std::string top = zip.first_folder();
  if (top.empty()) return FileKind::other_zip;
  if (!zip.find(top + "data.pkl"))
    return zip.find(top + "model.json") ? FileKind::legacy_torchscript : FileKind::other_zip;
  const bool scripted = zip.find(top + "constants.pkl") || zip.has_entry_under(top + "code/");
  return scripted ? FileKind::torchscript_archive : FileKind::torch_save_zip;
}

}  // namespace

std::string what_it_is(const ClassifiedFile& file) {
  if (file.kind == FileKind::records) {
    const auto first = first_object_member(*file.file);
    const auto writer = first ? records_writer(*first) : std::nullopt;
    if (!writer) return "a JSON file";
    const std::string form = first->key == "record" ? "jsonl" : "a --format json document";
    return "saved records (" + form +
           (writer->empty() ? std::string() : ", as " + std::string(*writer) + " writes") + ")";
  }
  if (file.kind == FileKind::safetensors) {  // what its reader would refuse, named
    const auto problem = safetensors_problem(*file.file);
    return problem ? "a broken safetensors file (" + *problem + ")" : "a safetensors file";
  }
  if (file.kind != FileKind::lfs_pointer) return std::string(describe(file.kind));
  // `version ...`, `oid sha256:HEX`, `size N`, a line each (git-lfs's spec: under 1,024 bytes)
  char text[1024];
  const std::string pointer(text, file.file->read_at(0, text, sizeof text));
  const auto value = [&](std::string_view key) -> std::string {
    const std::size_t at = pointer.find("\n" + std::string(key) + " ");
    if (at == std::string::npos) return "";
    const std::size_t begin = at + key.size() + 2;
    const std::size_t end = pointer.find('\n', begin);
    return pointer.substr(begin, std::min<std::size_t>(end == std::string::npos ? pointer.size() : end, begin + 80) - begin);
  };
  const std::string size = value("size"), oid = value("oid");
  const bool digits = !size.empty() && size.find_first_not_of("0123456789") == std::string::npos;
  return "a Git LFS pointer" +
         (digits ? " to a file of " + size + " bytes" : std::string()) +
         (oid.empty() ? std::string() : " (" + printable(oid, 80) + ")") +
         ", not the file itself: fetch it with `git lfs pull`";
}

std::optional<std::string> saved_records_of(const ClassifiedFile& file) {
  if (file.kind != FileKind::records) return std::nullopt;
  const auto first = first_object_member(*file.file);
  const auto writer = first ? records_writer(*first) : std::nullopt;
  if (!writer) return std::nullopt;
  return std::string(*writer);
}

namespace {

// What a file that is not empty and not a well-formed safetensors file is, by its magic numbers
// and structure; `named`: its name ends with .safetensors, which decides where the content is
// no other format (a zip that does not open, text): a safetensors file broken past recognition
// by its shape is then judged by the format it claims, and its reader names the rule it breaks.
FileKind content_kind(ClassifiedFile& out, bool named) {
  const InputFile& file = *out.file;
  if (file.starts_with("PYTORCH1")) return FileKind::pytorch1_container;
  if (file.starts_with("\x93NUMPY")) return FileKind::npy;
  if (file.starts_with("7z\xBC\xAF\x27\x1C")) return FileKind::seven_zip;
  if (starts_compressed(file)) return FileKind::compressed;
  if (file.starts_with(kLfsPointer)) return FileKind::lfs_pointer;
  if (file.starts_with("\x80") && is_legacy_torch_save(file)) return FileKind::legacy_pickle;
  // after the magic numbers above, one of which (an .npy header of 123 bytes) has that shape too
  if (shaped_like_safetensors(file)) return FileKind::safetensors;
  if (file.starts_with("PK")) {
    try {
      out.zip = std::make_shared<const ZipArchive>(out.file);
    } catch (const Error&) {
      if (named) return FileKind::safetensors;  // a length whose first bytes are "PK"
      throw;
    }
    return zip_kind(*out.zip);
  }
  if (file.starts_with("\x80")) return FileKind::pickle;
  if (const auto tar = read_tar(file, 16)) {  // the first members tell
    const auto has = [&](const char* name) {
      return std::any_of(tar->members.begin(), tar->members.end(),
                         [&](const TarMember& m) { return m.name == name; });
    };
    // PyTorch 0.2 and 0.3 wrote sys_info first (its name alone tells a file cut short)
    const bool torch_save = (has("pickle") && has("storages")) ||
                            (!tar->members.empty() && tar->members.front().name == "sys_info");
    return torch_save ? FileKind::torch_save_tar : FileKind::tar;
  }
  if (const auto first = first_object_member(file)) {
    if (first->key == "weight_map" || first->key == "metadata") return FileKind::weights_index;
    // '{' then no key a JSON object has: the length of a header of 123 bytes ('{')
    if (named && first->key.empty()) return FileKind::safetensors;
    return FileKind::records;
  }
  return named ? FileKind::safetensors : FileKind::text;
}

}  // namespace

bool starts_a_binary_format(std::string_view head) {
  constexpr std::string_view kMagic[] = {"PK", "\x93NUMPY", "PYTORCH1", "\x80"};
  for (const std::string_view magic : kMagic)
    if (head.substr(0, magic.size()) == magic) return true;
  return starts_like_safetensors(head);
}

ClassifiedFile classify_file(const std::string& path, std::string_view what) {
  return classify(InputFile::open(path, what, starts_a_binary_format));
}

ClassifiedFile classify(InputFilePtr opened) {
  ClassifiedFile out;
  out.file = std::move(opened);
  const std::string& path = out.file->path();
  const InputFile& file = *out.file;
  if (file.size() == 0)
    out.kind = FileKind::empty;
  else if (is_safetensors(file))  // before the magic numbers its length may look like
    out.kind = FileKind::safetensors;
  else
    out.kind = content_kind(out, named_safetensors(path));
  return out;
}

}  // namespace vin::diagnostics
