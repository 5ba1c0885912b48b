// The sides of `vin-inspect diff`: records from an archive, a YAML rendering, or a file of saved
// records (jsonl or a json document), whichever the file is.
#pragma once

#include <string>
#include <utility>

#include "vin/diagnostics/formats/model_file.h"
#include "vin/diagnostics/diff/record_diff.h"

namespace vin::diagnostics {

/// How diff reads a side.
enum class SideKind {
  by_content,     ///< an archive's inspect-model records (every detail), a YAML rendering's
                  ///< inspect-config records, or saved records, told apart by content
  configuration,  ///< an archive's config.yaml rendering (inspect-config records) rather than its
                  ///< modules; other files as by_content
};

/// The records of one side of diff: an archive's inspect-model records with --all's details
/// (describe_model_file, with `fallback` for archives the structure reader does not understand), a
/// configuration's inspect-config records with the contents of the fields it does not walk, or
/// the records a jsonl or json file holds. Throws Error when unreadable.
RecordSet load_record_set(const std::string& path, const LibTorchInspector& fallback,
                          SideKind kind = SideKind::by_content);

/// Both sides of a diff, as load_record_set reads each: two sides read as data alone (saved
/// records, weights files) are read at once on two threads (a million records each, or two
/// weights files' checksums: half the wall time on two cores), anything else one after the
/// other (an archive's side may load LibTorch). Where both sides fail, the old side's error is
/// the one thrown.
std::pair<RecordSet, RecordSet> load_record_sets(const std::string& old_path,
                                                 const std::string& new_path,
                                                 const LibTorchInspector& fallback,
                                                 SideKind kind = SideKind::by_content);

}  // namespace vin::diagnostics
