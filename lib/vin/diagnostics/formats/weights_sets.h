// Weights files as the format table reads them (contract 11): one file of any weights format
// (safetensors, torch.save's zip, legacy and tar formats) or a sharded set of them, by its index
// or its directory, each file told apart by the classifier and read by weights/'s readers.
#pragma once

#include <cstddef>
#include <string>

#include "vin/diagnostics/formats/file_kind.h"
#include "vin/diagnostics/records/model_metadata.h"

namespace vin::diagnostics {

/// The most entries model_file_in_directory looks at.
constexpr std::size_t kMaxDirectoryEntries = 100000;

/// The file a directory stands for: its one sharded set's index (`*.index.json`), else its one
/// weights file (`*.safetensors`, `*.bin`, `*.pt`, `*.pth`). Throws Error naming the directory
/// and what it holds otherwise.
std::string model_file_in_directory(const std::string& directory);

/// The model `file` holds (is_weights_kind: a weights file, or a sharded set's index), its
/// WeightsFile record in the details: its tensors by key, with details.tensors their
/// TensorMetadata and data_crc32 (each tensor's bytes read once, a piece at a time). A sharded
/// set's shards are each read as one weights file of any format. Throws Error naming the file
/// and the entry for anything the format forbids, and refuses other files (refuse, kDescribe).
ModelMetadata describe_weights_file(const ClassifiedFile& file, const InspectDetails& details);

}  // namespace vin::diagnostics
