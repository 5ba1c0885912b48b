// Fuzz target: the torch.export reader's JSON and nested members (contract 10.4). The first byte
// picks a template, the tied-weights fixture of torch 2.14 (a PT2 Archive) or of torch 2.6 (the
// flat zip), and a member of it: the program JSON, or the weights config (2.14) / the nested
// torch.save state dict (2.6). The rest of the input replaces that member; the archive is put
// back together (stored, CRCs right, so the zip layer lets it through) and read with every
// detail and the operators, then written as jsonl; then read as capture's interpreter reads a
// program (read_export_program) with each weight's storage. Anything but vin::diagnostics::Error is a
// finding. Seeds (fuzz_seeds.py): each .pt2 fixture's members behind their selector byte.
#include <cstddef>
#include <cstdint>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "vin/diagnostics/export/export_archive.h"
#include "vin/diagnostics/export/export_program.h"
#include "vin/diagnostics/container/input_file.h"
#include "vin/diagnostics/output/output_format.h"
#include "vin/diagnostics/records/error.h"

namespace {

namespace vd = vin::diagnostics;

using Members = std::vector<std::pair<std::string, std::string>>;

// the members of a template fixture, in their order
Members read_template(const std::string& path) {
  const vd::ZipArchive zip(vd::InputFile::open(path));
  Members members;
  for (std::size_t i = 0; i < zip.entries().size(); ++i)
    members.emplace_back(zip.entries()[i].name,
                         zip.read(i, std::uint64_t{64} << 20, zip.entries()[i].name));
  return members;
}

std::uint32_t crc32(const std::string& bytes) {
  static const auto table = [] {
    std::vector<std::uint32_t> t(256);
    for (std::uint32_t n = 0; n < 256; ++n) {
      std::uint32_t c = n;
      for (int k = 0; k < 8; ++k) c = c & 1 ? 0xedb88320u ^ (c >> 1) : c >> 1;
      t[n] = c;
    }
    return t;
  }();
  std::uint32_t c = 0xffffffffu;
  for (const char b : bytes) c = table[(c ^ static_cast<std::uint8_t>(b)) & 0xff] ^ (c >> 8);
  return c ^ 0xffffffffu;
}

void put(std::string& out, std::uint32_t value, int bytes) {
  for (int i = 0; i < bytes; ++i) out += static_cast<char>((value >> (8 * i)) & 0xff);
}

// A zip of stored members (no compression, no extra fields), as Python's zipfile writes them.
std::string stored_zip(const Members& members) {
  std::string out, directory;
  for (const auto& [name, data] : members) {
    const std::uint32_t offset = static_cast<std::uint32_t>(out.size());
    const std::uint32_t crc = crc32(data);
    const auto size = static_cast<std::uint32_t>(data.size());
    const auto name_size = static_cast<std::uint32_t>(name.size());
    put(out, 0x04034b50, 4);  // local file header
    put(out, 20, 2);
    put(out, 0, 2);  // flags
    put(out, 0, 2);  // stored
    put(out, 0, 4);  // time, date
    put(out, crc, 4);
    put(out, size, 4);
    put(out, size, 4);
    put(out, name_size, 2);
    put(out, 0, 2);
    out += name;
    out += data;
    put(directory, 0x02014b50, 4);  // central directory header
    put(directory, 20, 2);
    put(directory, 20, 2);
    put(directory, 0, 2);
    put(directory, 0, 2);
    put(directory, 0, 4);
    put(directory, crc, 4);
    put(directory, size, 4);
    put(directory, size, 4);
    put(directory, name_size, 2);
    put(directory, 0, 2);  // extra
    put(directory, 0, 2);  // comment
    put(directory, 0, 2);  // disk
    put(directory, 0, 2);  // internal attributes
    put(directory, 0, 4);  // external attributes
    put(directory, offset, 4);
    directory += name;
  }
  const auto directory_offset = static_cast<std::uint32_t>(out.size());
  out += directory;
  put(out, 0x06054b50, 4);  // end of central directory
  put(out, 0, 4);
  put(out, static_cast<std::uint32_t>(members.size()), 2);
  put(out, static_cast<std::uint32_t>(members.size()), 2);
  put(out, static_cast<std::uint32_t>(directory.size()), 4);
  put(out, directory_offset, 4);
  put(out, 0, 2);
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const Members templates[2] = {read_template(VIN_PT2_FIXTURES "/torch-2.14/tied.pt2"),
                                       read_template(VIN_PT2_FIXTURES "/torch-2.6/tied.pt2")};
  static const char* const replaced[2][2] = {
      {"tied/models/model.json", "tied/data/weights/model_weights_config.json"},
      {"serialized_exported_program.json", "serialized_state_dict.pt"}};
  if (size == 0) return 0;
  const int which = (data[0] >> 1) & 1;
  Members members = templates[which];
  for (auto& [name, bytes] : members)
    if (name == replaced[which][data[0] & 1])
      bytes.assign(reinterpret_cast<const char*>(data + 1), size - 1);
  const std::string bytes = stored_zip(members);
  try {
    const vd::ZipArchive zip(vd::InputFile::from_bytes("fuzz.pt2", bytes));
    vd::InspectDetails details = vd::InspectDetails::everything();
    details.operators = true;
    std::ostringstream out;
    vd::write_model_metadata(out, vd::read_export_archive(zip, details), vd::OutputFormat::jsonl);
  } catch (const vd::Error&) {
  }
  // the program as capture's interpreter reads it (export_program.h: every argument variant,
  // nested graphs, frames, specs, ranges), and where its weights lie
  try {
    const vd::ZipArchive zip(vd::InputFile::from_bytes("fuzz.pt2", bytes));
    const vd::ExportProgram program = vd::read_export_program(zip);
    vd::ProgramStorages storages(zip);
    for (const vd::ProgramWeight& w : program.weights) (void)storages.read(w.storage);
  } catch (const vd::Error&) {
  }
  return 0;
}
