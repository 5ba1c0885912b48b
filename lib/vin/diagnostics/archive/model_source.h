// Where inspect-model's records come from: the archive itself, read as data
// (read_archive_metadata), or, only when the user asks for it (--load-with-libtorch), LibTorch's
// loader, which runs the archive's TorchScript (`__setstate__` methods) and so is never used on its
// own initiative.
#pragma once

#include <functional>
#include <string>

#include "vin/diagnostics/archive/archive_layout.h"
#include "vin/diagnostics/archive/file_kind.h"
#include "vin/diagnostics/records/model_metadata.h"

namespace vin::diagnostics {

/// Loads the probed archive with LibTorch (through the same opened file) and inspects it, with
/// `details`; `why` says why the structure reader gave up.
using LibTorchInspector = std::function<ModelMetadata(
    const ArchiveLayout& archive, const InspectDetails& details, const std::string& why)>;

/// The inspect-model records of the archive at `path`: from read_archive_metadata when it
/// understands the archive, else from `fallback` when one is given. Without a fallback such an
/// archive is refused: Error naming the file, the construct the reader cannot describe, and the
/// flag that would load it with LibTorch. Throws Error for files that are not archives.
/// `details` as read_archive_metadata takes them.
ModelMetadata describe_archive(const std::string& path, const InspectDetails& details,
                               const LibTorchInspector& fallback);
/// The same for a file classified already (the file opened once): a TorchScript archive, or one
/// of PyTorch 1.0 to 1.2 (read_legacy_archive_metadata, never with the fallback: LibTorch cannot
/// load it).
ModelMetadata describe_archive(const ClassifiedFile& file, const InspectDetails& details,
                               const LibTorchInspector& fallback);
/// The same for an archive probed already (the file opened once).
ModelMetadata describe_archive(const ArchiveLayout& archive, const InspectDetails& details,
                               const LibTorchInspector& fallback);

/// The flag of inspect-model and diff that allows the LibTorch fallback.
inline constexpr const char* kLoadWithLibTorchFlag = "--load-with-libtorch";

}  // namespace vin::diagnostics
