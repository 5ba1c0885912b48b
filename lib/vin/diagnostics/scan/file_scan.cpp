#include "vin/diagnostics/scan/file_scan.h"

#include <sys/stat.h>

#include <algorithm>
#include <array>
#include <filesystem>
#include <map>
#include <optional>

#include "vin/diagnostics/container/tar_archive.h"
#include "vin/diagnostics/container/zip_archive.h"
#include "vin/diagnostics/formats/file_format.h"
#include "vin/diagnostics/formats/file_kind.h"
#include "vin/diagnostics/records/error.h"
#include "vin/diagnostics/safetensors/safetensors_file.h"
#include "vin/diagnostics/scan/lenient_zip.h"
#include "vin/diagnostics/scan/load_time_code.h"
#include "vin/diagnostics/scan/pickle_scan.h"
#include "vin/diagnostics/text/printable.h"

namespace vin::diagnostics {
namespace {

// The most of one pickle stream, or of a zip or tar member, read to be walked: real pickles are
// a few MB (the 5,054-module fixture's data.pkl: 6 MB)
constexpr std::uint64_t kMaxStreamBytes = std::uint64_t{1} << 30;
// A legacy torch.save file: the magic number, the protocol version, the system info, the value,
// the storage keys; raw storages after them
constexpr int kLegacyStreams = 5;

bool ends_with(std::string_view name, std::string_view suffix) {
  return name.size() >= suffix.size() && name.substr(name.size() - suffix.size()) == suffix;
}

// Whether a file of this name is a bare pickle when its bytes are no other format (protocol 0
// and 1 pickles start with text: `cos\nsystem\n`)
bool pickle_file_name(std::string_view name) {
  for (const char* suffix : {".pkl", ".pickle", ".bin", ".pth", ".pt", ".ckpt", ".pk", ".p"})
    if (ends_with(name, suffix)) return true;
  return false;
}

// What a file's streams add up to
class Judgement {
 public:
  Judgement(const std::string& file, const AllowList& allowed, PickleScanLimits limits = {})
      : file_(file), allowed_(allowed), limits_(limits) {}

  // walks the stream at `bytes`; returns where it stopped (past STOP), or nothing where it broke
  std::optional<std::size_t> stream(std::string_view bytes, const std::optional<std::string>& member,
                                    std::uint64_t base = 0, bool only_if_it_runs_code = false,
                                    PickleVerdict* out = nullptr) {
    PickleVerdict v = scan_pickle(bytes, allowed_, limits_);
    if (only_if_it_runs_code && !v.runs_code) return v.stopped ? std::optional<std::size_t>(v.end) : std::nullopt;
    runs_code_ = runs_code_ || v.runs_code;
    cannot_judge_ = cannot_judge_ || v.cannot_judge;
    torch_ok_ = torch_ok_ && v.torch_weights_only;
    globals_.insert(v.globals.begin(), v.globals.end());
    for (ScanFinding& f : v.findings) {
      f.file = file_;
      f.member = member;
      if (f.offset) *f.offset += base;
      findings_.push_back(std::move(f));
    }
    const std::optional<std::size_t> end = v.stopped ? std::optional<std::size_t>(v.end) : std::nullopt;
    if (out) *out = std::move(v);
    return end;
  }

  void container(const std::optional<std::string>& member, const std::string& what,
                 const std::string& reason, bool judgeable = false) {
    if (!judgeable) cannot_judge_ = true;
    findings_.push_back({file_, member, std::nullopt, "container", what, "malformed", false, reason});
  }

  // code a TorchScript archive runs at load that does more than copy state (or cannot be read)
  void load_time_code(const LoadTimeFinding& f) {
    (f.runs_code ? runs_code_ : cannot_judge_) = true;
    std::optional<std::string> member;
    if (!f.record.empty()) member = f.record;
    findings_.push_back({file_, member, std::nullopt, "torchscript", f.name, f.severity,
                         f.runs_code, f.reason});
  }

  const std::set<std::string>& globals() const { return globals_; }
  const AllowList& allowed() const { return allowed_; }

  // a file inside this one (a member of a zip or tar), judged on its own: its verdict and
  // findings count for this file, each finding's member named from the outer member on (as it
  // is where `member` is empty: the same file read another way)
  void nested(const FileScan& inner, const std::string& member) {
    runs_code_ = runs_code_ || inner.summary.verdict == "runs-code";
    cannot_judge_ = cannot_judge_ || inner.summary.verdict == "cannot-judge";
    torch_ok_ = torch_ok_ && inner.summary.torch_weights_only.value_or(true);
    globals_.insert(inner.summary.globals.begin(), inner.summary.globals.end());
    for (ScanFinding f : inner.findings) {
      f.file = file_;
      if (!member.empty()) f.member = f.member ? member + "/" + *f.member : member;
      findings_.push_back(std::move(f));
    }
  }

  void unread(const std::string& reason) {
    cannot_judge_ = true;
    findings_.push_back({file_, std::nullopt, std::nullopt, "structure", "not judged", "malformed",
                         false, reason});
  }

  void torch_reads(bool reads) { torch_reads_ = reads; }

  FileScan result(const std::string& format) {
    FileScan out;
    out.summary.file = file_;
    out.summary.format = format;
    out.summary.verdict = runs_code_ ? "runs-code" : cannot_judge_ ? "cannot-judge" : "weights-only";
    out.summary.globals.assign(globals_.begin(), globals_.end());
    out.summary.findings = static_cast<std::int64_t>(findings_.size());
    out.summary.torch_version = kAllowListTorchVersion;
    if (torch_reads_) out.summary.torch_weights_only = torch_ok_ && !runs_code_ && !cannot_judge_;
    out.findings = std::move(findings_);
    return out;
  }

 private:
  std::string file_;
  const AllowList& allowed_;
  PickleScanLimits limits_;
  bool runs_code_ = false, cannot_judge_ = false, torch_ok_ = true, torch_reads_ = false;
  std::set<std::string> globals_;
  std::vector<ScanFinding> findings_;
};

// The pickle of an .npy image holding objects (dtype '|O'), or nothing
std::optional<std::string_view> npy_object_pickle(std::string_view npy) {
  if (npy.size() < 10 || npy.compare(0, 6, "\x93NUMPY") != 0) return std::nullopt;
  const auto major = static_cast<unsigned char>(npy[6]);
  const std::size_t width = major == 1 ? 2 : 4;
  if (npy.size() < 8 + width) return std::nullopt;
  std::uint64_t length = 0;
  for (std::size_t i = 0; i < width; ++i)
    length |= std::uint64_t{static_cast<unsigned char>(npy[8 + i])} << (8 * i);
  const std::size_t begin = 8 + width;
  if (length > npy.size() - begin) return std::nullopt;
  const std::string_view header = npy.substr(begin, static_cast<std::size_t>(length));
  if (header.find("'|O'") == std::string_view::npos && header.find("\"|O\"") == std::string_view::npos)
    return std::nullopt;
  return npy.substr(begin + static_cast<std::size_t>(length));
}

// A bare pickle file: its streams one after the other to the end
void scan_streams(Judgement& j, std::string_view bytes, const std::optional<std::string>& member,
                  int most = -1) {
  std::size_t at = 0;
  for (int n = 0; at < bytes.size() && n != most; ++n) {
    if (n > 0 && !starts_with_proto(bytes.substr(at)) && most < 0) {
      // what follows the last STOP is no pickle of protocol 2-5: walked only where it would
      // run code (a loader that reads on), else named
      if (!j.stream(bytes.substr(at), member, at, /*only_if_it_runs_code=*/true))
        j.container(member, "bytes after STOP",
                    std::to_string(bytes.size() - at) + " bytes after the last pickle's STOP at "
                    "offset " + std::to_string(at) + ", which no unpickler reads",
                    /*judgeable=*/true);
      return;
    }
    const std::optional<std::size_t> end = j.stream(bytes.substr(at), member, at);
    if (!end) return;
    at += *end;
  }
}

// A member name that would leave the folder a zip is extracted to: `..` among its parts, or a
// path from the root (`/x`, `\\x`, `C:x`)
bool unsafe_member_name(std::string_view name) {
  if (name.empty() || name[0] == '/' || name[0] == '\\' || (name.size() > 1 && name[1] == ':'))
    return !name.empty();
  for (std::size_t begin = 0; begin <= name.size();) {
    std::size_t end = name.find_first_of("/\\", begin);
    if (end == std::string_view::npos) end = name.size();
    if (name.substr(begin, end - begin) == "..") return true;
    begin = end + 1;
  }
  return false;
}

void judge_nested(Judgement& j, InputFilePtr inner, const std::string& member, int depth);

// Where a loader looks for the storage `key` of the zip member `pickle`, in LibTorch's order:
// NAME.pkl's storages in NAME/ beside it (data.pkl: data/, constants.pkl: constants/, a traced
// archive's traced_inputs.pkl: traced_inputs/), then data/, constants/ and the pickle's own folder
std::array<std::string, 4> storage_record_paths(const std::string& pickle, const std::string& key) {
  const std::size_t slash = pickle.rfind('/');
  const std::string folder = slash == std::string::npos ? "" : pickle.substr(0, slash + 1);
  const std::string own = pickle.substr(folder.size(), pickle.rfind('.') - folder.size()) + "/";
  return {folder + own + key, folder + "data/" + key, folder + "constants/" + key, folder + key};
}

// The storage records a pickle names must be there and hold its storages' bytes (torch.load
// refuses the file otherwise): a container finding for each that does not
void check_storage_records(Judgement& j, const ZipArchive& zip, const std::string& pickle,
                           const std::map<std::string, std::uint64_t>& bytes) {
  for (const auto& [key, wanted] : bytes) {
    const std::array<std::string, 4> paths = storage_record_paths(pickle, key);
    std::optional<std::uint64_t> held;
    std::string record = paths.front();
    for (const std::string& path : paths)
      if (const auto i = zip.find(path)) {  // the first that is there
        record = path;
        held = zip.entries()[*i].size;
        break;
      }
    if (held && *held >= wanted) continue;
    j.container(printable(record, 300), "storage record disagrees",
                pickle + " names the storage " + printable(key, 100) + " of " + std::to_string(wanted) +
                    " bytes; " + (held ? "its record holds " + std::to_string(*held) : std::string("no record holds it")));
  }
}

void scan_zip(Judgement& j, const ZipArchive& zip, int depth) {
  // the pickles a loader unpickles first (data.pkl, constants.pkl, any .pkl), which name the
  // storage records torch reads as raw bytes; then every other member that starts as a pickle
  std::set<std::string> storage_records;
  std::vector<std::size_t> others;
  for (std::size_t i = 0; i < zip.entries().size(); ++i) {
    const ZipArchive::Entry& e = zip.entries()[i];
    if (unsafe_member_name(e.name))
      j.container(printable(e.name, 300), "unsafe member name",
                  "a member named to be extracted outside the archive's folder");
    if (!pickle_name(e.name)) {
      others.push_back(i);
      continue;
    }
    if (e.size > kMaxStreamBytes) {
      j.unread(e.name + ": a pickle of " + std::to_string(e.size) + " bytes, more than scan reads");
      continue;
    }
    const std::string bytes = zip.read(i, kMaxStreamBytes, e.name);
    PickleVerdict v;
    j.stream(bytes, e.name, 0, false, &v);
    for (const std::string& key : v.storage_keys)
      for (std::string& path : storage_record_paths(e.name, key)) storage_records.insert(std::move(path));
    // the weights' pickle only: LibTorch may write a traced archive's traced_inputs/ records
    // empty (pytorch/serve's dummy.pt), and loads it all the same
    if (ends_with(e.name, "data.pkl")) check_storage_records(j, zip, e.name, v.storage_bytes);
  }
  for (const std::size_t i : others) {
    const ZipArchive::Entry& e = zip.entries()[i];
    if (storage_records.count(e.name) || e.size < 2) continue;
    // the member's first bytes tell whether it is read whole: a pickle, or an .npy image of
    // objects (numpy's header is at most 64 KiB in practice; 4 KiB holds every real one)
    const bool npy = e.name.size() > 4 && e.name.compare(e.name.size() - 4, 4, ".npy") == 0;
    std::string head(static_cast<std::size_t>(std::min<std::uint64_t>(e.size, npy ? 4096 : 4)), '\0');
    {
      ZipArchive::Member member = zip.open(i, e.name);
      std::size_t got = 0;
      while (got < head.size()) {
        const std::size_t n = member.read(head.data() + got, head.size() - got);
        if (n == 0) break;
        got += n;
      }
      head.resize(got);
    }
    const bool objects = npy && head.find("|O") != std::string::npos;
    if (head.compare(0, 4, "PK\x03\x04") == 0 || ends_with(e.name, ".tar")) {
      // a model file in the zip (a .pt in a .zip): judged as the file it is, copied first
      if (e.size > kMaxStreamBytes) {
        j.unread(e.name + ": a file of " + std::to_string(e.size) + " bytes inside the zip, more than scan copies out");
        continue;
      }
      ZipArchive::Member member = zip.open(i, e.name);
      judge_nested(j, InputFile::from_pieces(zip.path() + "/" + e.name, [&](char* out, std::size_t n) {
                     return member.read(out, n);
                   }), e.name, depth);
      continue;
    }
    if (!objects && !starts_with_proto(head)) continue;  // raw bytes: a tensor's, an array's
    if (e.size > kMaxStreamBytes) {
      j.unread(e.name + ": a member of " + std::to_string(e.size) + " bytes that starts as a "
               "pickle, more than scan reads");
      continue;
    }
    const std::string bytes = zip.read(i, kMaxStreamBytes, e.name);
    if (npy) {
      if (const auto pickle = npy_object_pickle(bytes)) j.stream(*pickle, e.name);
      continue;
    }
    // raw bytes that happen to start as a pickle are no pickle unless walking them runs code
    j.stream(bytes, e.name, 0, /*only_if_it_runs_code=*/true);
  }
}

// A tar's members; what is wrong with it as findings
std::vector<TarMember> tar_members(Judgement& j, const InputFile& file) {
  std::optional<TarContents> tar = read_tar(file);
  if (!tar) {
    j.unread("not a tar after all");
    return {};
  }
  if (tar->problem) j.container(std::nullopt, "tar", *tar->problem);
  return std::move(tar->members);
}

// torch.save's tar format (PyTorch 0.1-0.3): its pickles (`sys_info`, `pickle`), not the raw
// `storages` and `tensors`
void judge_tar(Judgement& j, const InputFile& file) {
  j.torch_reads(true);
  for (const TarMember& m : tar_members(j, file)) {
    if (m.name == "storages" || m.name == "tensors" || m.size > kMaxStreamBytes) continue;
    std::string bytes(static_cast<std::size_t>(m.size), '\0');
    bytes.resize(file.read_at(m.begin, bytes.data(), bytes.size()));
    scan_streams(j, bytes, m.name);
  }
}

// A TorchScript archive: LibTorch's own unpickler reads its pickles, resolving only the archive's
// classes and torch.jit._pickle's helpers (no Python is imported); what runs at load is the
// archive's TorchScript: the __setstate__ methods of its classes and what they reach, judged by
// load_time_code
FileScan judge_torchscript(const std::string& path, const ZipArchive& zip, const AllowList& allowed,
                           const std::string& format, int depth) {
  const AllowList torchscript = allowed.with_torchscript_names();
  Judgement j(path, torchscript);
  scan_zip(j, zip, depth);
  // the source LibTorch compiles: TOP/code/**.py, TOP the folder of the archive's first record
  // (a .py anywhere else is never read, so it cannot stand in for the real class)
  const std::string code_folder = zip.first_folder() + "code/";
  CodeMembers code;
  for (std::size_t i = 0; i < zip.entries().size(); ++i) {
    const ZipArchive::Entry& e = zip.entries()[i];
    if (!ends_with(e.name, ".py") || e.name.compare(0, code_folder.size(), code_folder) != 0)
      continue;
    if (e.size > kMaxStreamBytes) {
      j.unread(e.name + ": TorchScript source of " + std::to_string(e.size) + " bytes, more than scan reads");
      continue;
    }
    code.emplace_back(e.name, zip.read(i, kMaxStreamBytes, e.name));
  }
  // the torch.classes objects its pickles hold (a library's C++ class: torchtext's Vocab) are
  // listed among the globals: their __setstate__ is the loaded library's own code restoring
  // that class's state, and without the library LibTorch refuses the archive
  for (const LoadTimeFinding& f : judge_load_time_code(code)) j.load_time_code(f);
  return j.result(format);
}

// The first `n` bytes of `file` (fewer in a shorter one)
std::string prefix(const InputFile& file, std::uint64_t n) {
  std::string bytes(static_cast<std::size_t>(std::min(n, file.size())), '\0');
  bytes.resize(file.read_at(0, bytes.data(), bytes.size()));
  return bytes;
}

// A file of pickles one after the other (`most` of them; -1 all), then perhaps raw bytes (a
// legacy torch.save file's storages): its first 16 MiB walked, all of it up to 1 GiB only where
// a stream runs past them (a 10 GB file is never read whole)
FileScan judge_pickle_file(const std::string& path, const InputFile& file, const AllowList& allowed,
                           const std::string& format, int most) {
  constexpr std::uint64_t kFirstRead = std::uint64_t{16} << 20;
  for (const std::uint64_t n : {kFirstRead, kMaxStreamBytes}) {
    const std::string bytes = prefix(file, n);
    Judgement j(path, allowed);
    j.torch_reads(true);
    scan_streams(j, bytes, std::nullopt, most);
    FileScan result = j.result(format);
    const bool cut_short = bytes.size() < file.size() &&
                           std::any_of(result.findings.begin(), result.findings.end(),
                                       [&](const ScanFinding& f) {
                                         return f.name == "broken stream" && f.offset &&
                                                *f.offset >= bytes.size();
                                       });
    if (!cut_short || n == kMaxStreamBytes) return result;
  }
  return {};  // not reached
}

// A zip the one zip reader refuses, or a file that cannot be read: a container finding saying
// why, and for a zip what a lenient reading of its members reaches (lenient_zip): runs-code
// where that is a call or a global outside the list, else cannot-judge
FileScan judge_unread(const std::string& path, const InputFilePtr& file, const AllowList& allowed,
                      const std::string& why) {
  Judgement j(path, allowed);
  const bool zip = file && (file->starts_with("PK\x03\x04") || file->starts_with("PK\x05\x06"));
  j.container(std::nullopt, zip ? "damaged zip" : "unreadable", printable(why, 2000));
  if (!zip) return j.result("unknown");
  try {
    const std::vector<LenientMember> members = read_zip_leniently(*file);
    // LibTorch's names where the members are a TorchScript archive's
    const bool torchscript = std::any_of(members.begin(), members.end(), [](const LenientMember& m) {
      return ends_with(m.name, "/constants.pkl") || m.name.find("/code/") != std::string::npos;
    });
    const AllowList lenient_allowed = torchscript ? allowed.with_torchscript_names() : allowed;
    Judgement lenient(path, lenient_allowed);  // keeps a reference: the list outlives it
    const std::string top = members.empty() ? "" : members.front().name.substr(0, members.front().name.find('/') + 1);
    CodeMembers code;
    for (const LenientMember& m : members) {
      if (!m.read) continue;
      if (ends_with(m.name, ".py")) {  // TorchScript source LibTorch would compile
        if (m.name.compare(0, top.size() + 5, top + "code/") == 0) code.emplace_back(m.name, m.bytes);
        continue;
      }
      lenient.stream(m.bytes, printable(m.name, 300), 0, true);
    }
    for (const LoadTimeFinding& f : judge_load_time_code(code))
      if (f.runs_code) lenient.load_time_code(f);  // what cannot be judged adds nothing here
    FileScan read = lenient.result("zip");
    for (ScanFinding& f : read.findings) f.member = f.member ? *f.member + " (read leniently)" : f.member;
    j.nested(read, "");
  } catch (const Error&) {  // the system refused a read: the container finding says enough
  }
  return j.result("zip");
}

// A tar that is no torch.save file: each member judged as the file it is
void judge_plain_tar(Judgement& j, const InputFile& file, int depth) {
  for (const TarMember& m : tar_members(j, file)) {
    if (m.size > kMaxStreamBytes) {  // each member is copied out to be judged as a file
      j.unread(m.name + ": a file of " + std::to_string(m.size) + " bytes inside the tar, more than scan copies out");
      continue;
    }
    std::uint64_t at = m.begin;
    const std::uint64_t end = m.begin + m.size;
    judge_nested(j, InputFile::from_pieces(file.path() + "/" + m.name, [&](char* out, std::size_t n) {
                   const std::size_t got = file.read_at(at, out, static_cast<std::size_t>(std::min<std::uint64_t>(n, end - at)));
                   at += got;
                   return got;
                 }), m.name, depth);
  }
}

FileScan judge_file(const ClassifiedFile& file, const std::string& path, const AllowList& allowed,
                    int depth) {
  Judgement j(path, allowed);
  const std::string format(format_of(file.kind).name);
  const std::uint64_t size = file.file->size();
  switch (file.kind) {
    case FileKind::pickle:
    case FileKind::legacy_pickle:
      return judge_pickle_file(path, *file.file, allowed, format,
                               file.kind == FileKind::legacy_pickle ? kLegacyStreams : -1);
    case FileKind::torchscript_archive:
    case FileKind::legacy_torchscript:
      return judge_torchscript(path, *file.zip, allowed, format, depth);
    case FileKind::torch_save_zip:
    case FileKind::torch_export:
    case FileKind::other_zip:
      j.torch_reads(file.kind == FileKind::torch_save_zip);
      scan_zip(j, *file.zip, depth);
      return j.result(format);
    case FileKind::npy: {
      const std::string bytes = file.file->read_all(std::min(size, kMaxStreamBytes), "an .npy file");
      if (const auto pickle = npy_object_pickle(bytes)) j.stream(*pickle, std::nullopt);
      return j.result(format);
    }
    case FileKind::safetensors:
      try {
        read_safetensors_header(*file.file);
      } catch (const Error& e) {
        j.container(std::nullopt, "broken header", printable(e.what(), 2000));
      }
      return j.result(format);
    case FileKind::torch_save_tar: {
      PickleScanLimits tar_ids;
      tar_ids.text_storage_ids = true;  // the tar format's persistent ids are storage keys
      Judgement t(path, allowed, tar_ids);
      judge_tar(t, *file.file);
      return t.result(format);
    }
    case FileKind::tar:
      judge_plain_tar(j, *file.file, depth);
      return j.result(format);
    case FileKind::weights_index:
      return j.result(format);  // JSON naming the shards, which are files of their own
    case FileKind::pytorch1_container:
      // JSON and ONNX graphs, no pickle; no released PyTorch loads it, so nothing runs at load
      return j.result(format);
    case FileKind::text:
      if (pickle_file_name(path))  // a protocol 0 or 1 pickle reads as text
        return judge_pickle_file(path, *file.file, allowed, "pickle", -1);
      [[fallthrough]];
    default:
      j.unread(what_it_is(file) + ", not a model file scan judges");
      return j.result(format);
  }
}

// How deep files inside files are opened (a .pt in a .zip in a .tar: 2)
constexpr int kMaxNesting = 4;

void judge_nested(Judgement& j, InputFilePtr inner, const std::string& member, int depth) {
  if (depth + 1 > kMaxNesting) {
    j.unread(member + ": a file inside files " + std::to_string(kMaxNesting) + " deep, deeper than scan opens");
    return;
  }
  FileScan scan;
  try {
    const ClassifiedFile file = classify(inner);
    // what no loader reads (text, JSON, an empty file) is no model inside the container; a
    // protocol 0 or 1 pickle reads as text, and is judged where its name says pickle
    if ((file.kind == FileKind::text && !pickle_file_name(inner->path())) ||
        file.kind == FileKind::records || file.kind == FileKind::empty)
      return;
    scan = judge_file(file, inner->path(), j.allowed(), depth + 1);
  } catch (const Error& e) {
    scan = judge_unread(inner->path(), inner, j.allowed(), e.what());
  }
  j.nested(scan, member);
}

}  // namespace

FileScan scan_file(const std::string& path, const AllowList& allowed) {
  InputFilePtr file;
  try {
    file = InputFile::open(path, "a file to scan", starts_a_binary_format);
  } catch (const Error& e) {
    return judge_unread(path, nullptr, allowed, e.what());
  }
  return scan_input(file, allowed);
}

FileScan scan_input(const InputFilePtr& file, const AllowList& allowed) {
  try {
    return judge_file(classify(file), file->path(), allowed, 0);
  } catch (const Error& e) {  // a read that failed half way, a zip the reader refuses
    return judge_unread(file->path(), file, allowed, e.what());
  }
}

std::vector<std::string> scan_targets(const std::vector<std::string>& paths) {
  namespace fs = std::filesystem;
  std::vector<std::string> files;
  for (const std::string& path : paths) {
    std::error_code error;
    const fs::file_status status = fs::symlink_status(path, error);
    if (error || !fs::exists(status))
      throw Error(printable(path) + ": no such file or directory");
    if (!fs::is_directory(status)) {
      files.push_back(path);
      continue;
    }
    std::vector<std::string> found;
    for (auto it = fs::recursive_directory_iterator(path, fs::directory_options::skip_permission_denied, error);
         !error && it != fs::recursive_directory_iterator(); it.increment(error))
      if (it->is_regular_file(error) && !it->is_symlink(error)) found.push_back(it->path().string());
    if (error) throw Error(printable(path) + ": cannot list the directory (" + error.message() + ")");
    std::sort(found.begin(), found.end());
    files.insert(files.end(), found.begin(), found.end());
  }
  return files;
}

}  // namespace vin::diagnostics
