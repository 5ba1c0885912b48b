#include "vin/diagnostics/export/aoti_package.h"

#include <map>
#include <vector>

#include "vin/diagnostics/export/export_schema.h"
#include "vin/diagnostics/json/bounded_json.h"
#include "vin/diagnostics/records/error.h"
#include "vin/diagnostics/text/printable.h"

namespace vin::diagnostics {

using namespace export_detail;

// The platform a compiled library was built for, as Python's sysconfig.get_platform() names it,
// from its first bytes (an ELF, PE or Mach-O header); nothing for another file.
std::optional<std::string> library_platform(std::string_view head) {
  const auto u16 = [&](std::size_t at) {
    return static_cast<unsigned>(static_cast<unsigned char>(head[at])) |
           static_cast<unsigned>(static_cast<unsigned char>(head[at + 1])) << 8;
  };
  if (head.size() >= 20 &&
      head.compare(0, 4,
                   "\x7f"
                   "ELF") == 0 &&
      head[5] == 1) {
    static const std::map<unsigned, std::string> kMachines = {
        {3, "i686"},    {20, "ppc"},    {21, "ppc64le"},  {22, "s390x"},
        {40, "armv7l"}, {62, "x86_64"}, {183, "aarch64"}, {243, "riscv64"}};
    const auto it = kMachines.find(u16(18));
    return "linux-" + (it == kMachines.end() ? "e_machine" + std::to_string(u16(18)) : it->second);
  }
  if (head.size() >= 8 && (head.compare(0, 4, "\xcf\xfa\xed\xfe") == 0)) {
    const unsigned cpu = u16(4);
    return std::string("macosx-") + (cpu == 7 ? "x86_64" : cpu == 12 ? "arm64" : "unknown");
  }
  if (head.size() >= 2 && head.compare(0, 2, "MZ") == 0) return std::string("win");
  return std::nullopt;
}

// An AOTInductor package: each compiled model under data/aotinductor/ with the device its
// metadata names, and its platform (the metadata's, else its library's header)
ExportArchive aoti_package(const ZipArchive& zip) {
  ExportArchive archive;
  archive.file = zip.path();
  archive.layout = "aoti_package";
  const std::string top = zip.find(zip.first_folder() + "archive_format") ? zip.first_folder() : "";
  const std::string folder = top + "data/aotinductor/";
  std::map<std::string, AotiModel> models;
  for (std::size_t index = 0; index < zip.entries().size(); ++index) {
    const auto& e = zip.entries()[index];
    if (e.name.rfind(folder, 0) != 0) continue;
    const std::string rest = e.name.substr(folder.size());
    const std::size_t slash = rest.find('/');
    if (slash == std::string::npos) continue;
    AotiModel& model = models[rest.substr(0, slash)];
    model.model = rest.substr(0, slash);
    const auto ends_with = [&](std::string_view tail) {
      return rest.size() > tail.size() &&
             rest.compare(rest.size() - tail.size(), tail.size(), tail) == 0;
    };
    try {
      if (ends_with("_metadata.json")) {
        const auto text = zip.read(e.name, kMaxConfigBytes);
        const Json meta = text ? parse_bounded_json(*text, 16) : Json();
        if (const Json* v = optional_field(meta, "AOTI_DEVICE_KEY"); v && v->is_string())
          model.device = v->get<std::string>();
        if (const Json* v = optional_field(meta, "AOTI_PLATFORM"); v && v->is_string())
          model.platform = v->get<std::string>();
      } else if ((ends_with(".so") || ends_with(".dll") || ends_with(".dylib")) &&
                 !model.platform) {
        char head[64] = {};
        ZipArchive::Member member = zip.open(index, e.name);
        model.platform = library_platform(std::string_view(head, member.read(head, sizeof head)));
      }
    } catch (const JsonTooDeep&) {
    } catch (const Json::exception&) {
    }
  }
  archive.aoti.emplace();
  for (auto& [name, model] : models) {
    archive.models.push_back(name);
    archive.aoti->push_back(std::move(model));
  }
  return archive;
}

}  // namespace vin::diagnostics
