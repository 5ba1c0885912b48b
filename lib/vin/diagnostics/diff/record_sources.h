// The sides of `vin-inspect diff`: records from an archive, a YAML rendering, or a saved jsonl
// file, whichever the file is.
#pragma once

#include <string>

#include "vin/diagnostics/archive/model_source.h"
#include "vin/diagnostics/diff/record_diff.h"

namespace vin::diagnostics {

/// inspect-model records of a TorchScript archive (describe_archive, with `fallback` for archives
/// the structure reader does not understand), inspect-config records of a YAML rendering, or the
/// records a jsonl file holds (told apart by content). Throws Error when unreadable.
RecordSet load_record_set(const std::string& path, const LibTorchInspector& fallback);

}  // namespace vin::diagnostics
