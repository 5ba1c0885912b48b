// AOTInductor packages (.pt2 holding compiled code and no program): named with their models,
// each model's device and the platform it was compiled for, never described (contract 10.2).
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "vin/diagnostics/container/zip_archive.h"
#include "vin/diagnostics/records/model_metadata.h"

namespace vin::diagnostics {

/// An AOTInductor package: each compiled model under data/aotinductor/ with the device its
/// metadata names, and its platform (the metadata's, else its library's header).
ExportArchive aoti_package(const ZipArchive& zip);

/// The platform a compiled library was built for, as Python's sysconfig.get_platform() names
/// it, from its first bytes (an ELF, PE or Mach-O header); nothing for another file.
std::optional<std::string> library_platform(std::string_view head);

}  // namespace vin::diagnostics
