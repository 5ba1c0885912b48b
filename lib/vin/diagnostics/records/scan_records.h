// What `scan` says of a file (contract 14.2): a ScanFinding per finding, a ScanSummary per file.
// Plain values; nothing here depends on LibTorch.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace vin::diagnostics {

/// One thing found in a file.
struct ScanFinding {
  std::string file;
  std::optional<std::string> member;   ///< the zip or tar member; none for the file itself
  std::optional<std::uint64_t> offset;  ///< of the opcode from its stream's start; none for a
                                        ///< container finding
  std::string kind;      ///< "global", "opcode", "structure", "container", "torchscript"
  std::string name;      ///< the global (`module.qualname`), the opcode, or what is wrong
  std::string severity;  ///< "dangerous", "not-allowed", "malformed"
  bool called = false;   ///< whether the stream calls it (REDUCE, NEWOBJ, BUILD on it)
  std::string reason;    ///< one sentence
};

/// The verdict of one file.
struct ScanSummary {
  std::string file;
  std::string format;
  std::string verdict;               ///< "weights-only", "runs-code", "cannot-judge"
  std::vector<std::string> globals;  ///< every global the file imports, sorted, each once
  std::int64_t findings = 0;
  std::string torch_version;         ///< the torch whose allow-list was applied
  /// whether that torch's torch.load(weights_only=True) accepts every stream it unpickles;
  /// none for files torch.load does not read (safetensors, .npy, plain zips)
  std::optional<bool> torch_weights_only;
};

}  // namespace vin::diagnostics
