// The safetensors format (huggingface/safetensors, docs/inputs.md): an 8-byte little-endian
// header length N, N bytes of a JSON object (padded with spaces), then the tensors' bytes. The
// header maps each tensor's name to its dtype, shape and [begin, end) offsets in the data, and
// may hold `__metadata__`, a map of strings. Read as data, every rule of the format checked
// before anything else is read: nothing is trusted that would make a later read go past the
// file or allocate by what the file says.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "vin/diagnostics/container/input_file.h"
#include "vin/diagnostics/records/record_value.h"
#include "vin/diagnostics/text/dtypes.h"

namespace vin::diagnostics {

/// The largest header the format allows (the reference reader's MAX_HEADER_SIZE).
inline constexpr std::uint64_t kMaxSafetensorsHeaderBytes = 100'000'000;

/// One tensor of a safetensors file.
struct SafetensorsTensor {
  std::string key;  ///< its name in the header (a state dict's key: `fc1.weight`)
  const Dtype* dtype = nullptr;
  std::vector<std::int64_t> shape;
  std::int64_t numel = 0;
  /// its bytes' place in the file (not in the data: the header's offsets plus 8 + N)
  std::uint64_t begin = 0;
  std::uint64_t end = 0;
};

/// A safetensors file's header, checked.
struct SafetensorsHeader {
  /// `__metadata__`, an object of strings; null where the header has none
  Json metadata;
  /// in the header's order
  std::vector<SafetensorsTensor> tensors;
  /// where the data begins: 8 + N
  std::uint64_t data_begin = 0;
};

/// Whether a file's first bytes begin as a safetensors file does: a length under 4 GiB (its
/// high bytes zero, which no text has) and the header's '{'. What tells a safetensors file from
/// others (file_kind) and lets it through a pipe (input_file); its header is checked later.
inline bool starts_like_safetensors(std::string_view head) {
  return head.size() >= 9 && head[8] == '{' && head[4] == 0 && head[5] == 0 && head[6] == 0 &&
         head[7] == 0;
}

/// Reads and checks `file`'s header. Throws Error "PATH: not a valid safetensors file: WHY",
/// WHY naming the entry where there is one: a header length past the file or past
/// kMaxSafetensorsHeaderBytes, a header that is not a JSON object (or not UTF-8, or nested
/// deeper than the format's entries), a key twice, an entry without a known dtype, a shape of
/// non-negative integers or two offsets in order, a shape whose elements overflow 64 bits, bytes
/// that are not numel times the element size, tensors whose bytes leave a hole, overlap, or do
/// not end where the file ends, and a `__metadata__` that is not an object of strings.
SafetensorsHeader read_safetensors_header(const InputFile& file);

/// What read_safetensors_header would refuse in `file` (the WHY of its message), or nothing for
/// a header that keeps every rule: how a refusal by another reader names a broken one.
std::optional<std::string> safetensors_problem(const InputFile& file);


}  // namespace vin::diagnostics
