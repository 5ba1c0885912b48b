// One file judged (contract 14): every pickle stream a loader could unpickle walked by
// scan_pickle (a bare pickle's streams one after the other, a legacy torch.save file's five,
// every zip or tar member named .pkl/.pickle or starting with PROTO but the storage records,
// object arrays of .npy and .npz files), container troubles as findings, and the file's verdict:
// weights-only, runs-code or cannot-judge.
#pragma once

#include <string>
#include <vector>

#include "vin/diagnostics/container/input_file.h"
#include "vin/diagnostics/records/file_records.h"
#include "vin/diagnostics/scan/allowed_globals.h"

namespace vin::diagnostics {

/// A file's verdict and its findings.
struct FileScan {
  ScanSummary summary;
  std::vector<ScanFinding> findings;
};

/// Judges `path` (a file; a directory is expanded by scan_targets first). Never throws for what
/// the file holds: a file that cannot be read is `cannot-judge` with a finding saying why.
FileScan scan_file(const std::string& path, const AllowList& allowed);

/// The same for a file opened already (InputFile::from_bytes: a fuzzer's input), named by its
/// path.
FileScan scan_input(const InputFilePtr& file, const AllowList& allowed);

/// The files `paths` name: a file as it is, a directory's regular files below it (recursively,
/// symbolic links not followed, sorted by path). Throws Error naming a path that does not exist.
std::vector<std::string> scan_targets(const std::vector<std::string>& paths);

}  // namespace vin::diagnostics
