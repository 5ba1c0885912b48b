// Fuzz target: one safetensors file (read_safetensors_header, then each tensor's CRC-32 as
// --tensors reads it). Bad bytes must end in vin::diagnostics::Error; a header accepted must
// keep the format's promises: every tensor's bytes inside the file, in order, without holes or
// overlaps, numel times the element size. Anything else is a finding.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>
#include <vector>

#include "vin/diagnostics/container/input_file.h"
#include "vin/diagnostics/safetensors/safetensors_file.h"
#include "vin/diagnostics/records/error.h"
#include "vin/diagnostics/container/crc32.h"

namespace vd = vin::diagnostics;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    const vd::InputFilePtr file = vd::InputFile::from_bytes(
        "fuzz.safetensors", std::string_view(reinterpret_cast<const char*>(data), size));
    const vd::SafetensorsHeader header = vd::read_safetensors_header(*file);
    std::vector<const vd::SafetensorsTensor*> by_place;
    for (const vd::SafetensorsTensor& t : header.tensors) {
      if (t.begin < header.data_begin || t.begin > t.end || t.end > size) std::abort();
      if (t.end - t.begin != static_cast<std::uint64_t>(t.numel) * t.dtype->element_size)
        std::abort();
      vd::crc32_of_range(*file, t.begin, t.end);
      by_place.push_back(&t);
    }
    std::sort(by_place.begin(), by_place.end(), [](auto* a, auto* b) {
      return a->begin != b->begin ? a->begin < b->begin : a->end < b->end;
    });
    std::uint64_t reached = header.data_begin;
    for (const vd::SafetensorsTensor* t : by_place) {
      if (t->begin != reached) std::abort();
      reached = t->end;
    }
    if (reached != size) std::abort();
  } catch (const vd::Error&) {
  }
  return 0;
}
