// One pickle stream judged without running it (contract 14.3): every opcode of protocols 0-5
// walked on a simulated stack and memo (STACK_GLOBAL's operands are what the stack holds, however
// they got there), each global it imports checked against the allow-list, each call, object
// build and container update checked against torch's weights_only rules, pickles inside the
// pickle (the bytes given to an unpickling global) walked too. The stream fails closed: where it
// breaks after a global outside the list or any call, it runs code.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "vin/diagnostics/records/file_records.h"
#include "vin/diagnostics/scan/allowed_globals.h"

namespace vin::diagnostics {

/// Bounds on one stream's walk, far beyond what real pickles use.
struct PickleScanLimits {
  /// values on the stack, and marks (the 5,054-module fixture pushes 126,321 values in all)
  std::size_t max_stack = std::size_t{1} << 21;
  std::size_t max_memo = std::size_t{1} << 21;    ///< memo entries
  std::size_t max_nested_depth = 8;               ///< pickles inside pickles inside ...
  std::size_t max_findings = 1000;                ///< findings kept per stream (all counted)
  /// a persistent id that is a string is a storage's key (torch.save's tar format of PyTorch
  /// 0.1-0.3), as ('storage', ...) tuples are in the later formats
  bool text_storage_ids = false;
};

/// What one stream holds, as scan judges it.
struct PickleVerdict {
  std::vector<ScanFinding> findings;  ///< file and member left empty for the caller
  std::set<std::string> globals;      ///< every global imported, Python 3's spelling
  bool runs_code = false;             ///< a global outside the list, a call or build torch's
                                      ///< rules refuse, or a break after either
  bool cannot_judge = false;          ///< broken before anything that runs code was seen
  bool torch_weights_only = true;     ///< torch.load(weights_only=True) would accept it
  std::set<std::string> storage_keys;  ///< the keys of torch.save's ('storage', ...) ids: the
                                       ///< members torch reads as raw bytes, never unpickled
  /// for the keys whose id gives a storage type and an element count: the bytes the record must
  /// hold (the largest of the ids naming it)
  std::map<std::string, std::uint64_t> storage_bytes;
  std::size_t end = 0;                ///< past STOP (or where the walk stopped)
  bool stopped = false;               ///< STOP was reached
};

/// Walks the pickle that starts at `stream[0]`, up to its STOP. `depth`: how many pickles this
/// one is inside (the bytes of an unpickling call are walked at depth + 1).
PickleVerdict scan_pickle(std::string_view stream, const AllowList& allowed,
                          const PickleScanLimits& limits = {}, std::size_t depth = 0);

/// Whether `name` (a zip member, a file) is named as a pickle is: .pkl or .pickle.
bool pickle_name(std::string_view name);

/// Whether `bytes` start as a pickle of protocol 2 to 5 does (PROTO and its version).
bool starts_with_proto(std::string_view bytes);

}  // namespace vin::diagnostics
