// What a pickle must not hold before LibTorch's unpickler (and what runs after it) sees it.
// LibTorch 1.13 sizes its memo table from a BINPUT/LONG_BINPUT index and its buffers from a
// length prefix before checking either against the data, pops its stack without looking, frees
// nested values recursively, parses type strings recursively, and copies shared containers once
// per reference when inputs are placed on a device. A few changed bytes can make it allocate tens
// of gigabytes or overflow the stack; this scan refuses such pickles first, against limits far
// beyond what ordinary archives and inputs use (measured on every torchvision model:
// docs/safety.md).
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace vin::diagnostics {

/// Bounds on one pickle, with the maxima measured on real archives beside them.
struct PickleLimits {
  /// values pushed in all (the 5,054-module fixture: 126,321)
  std::size_t max_values = std::size_t{8} << 20;
  /// containers nested in containers (the 40-deep fixture: 87; a 2,000-deep module tree, the
  /// most the archive reader walks, about 4,000)
  std::size_t max_nesting = 5000;
  /// values reached when every reference to a shared container is followed (5,054 modules:
  /// 116,213)
  std::size_t max_expanded = std::size_t{8} << 20;
  /// `[` nesting of a type string given to torch.jit._pickle.restore_type_tag (measured: 2)
  std::size_t max_type_depth = 32;
};

/// Why `pickle` must not reach LibTorch's unpickler, or nothing. Refused: a memo index larger
/// than the pickle (a pickler numbers its memo entries from 0, one per PUT), a memo read of an
/// entry no PUT made, a length prefix longer than the bytes that follow it, an opcode that takes
/// more values than the stack holds above the last MARK or needs a MARK when none is open, and
/// anything beyond `limits`. The scan stops at STOP or at an opcode it does not know (LibTorch
/// refuses those itself), or where the pickle ends; the last two are refused too after a global
/// the reader does not rebuild (rebuilt_global). Every problem names the first such global the
/// pickle imported before it (ForeignGlobals), so that what loading would call is never hidden
/// by a problem found later in the stream.
std::optional<std::string> pickle_problem(std::string_view pickle, const PickleLimits& limits = {});

}  // namespace vin::diagnostics
