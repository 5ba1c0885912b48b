// Fuzz target: one file read as weights as `inspect-model FILE --tensors` reads it: told apart by
// the format table's classifier (formats/file_kind) and read by describe_weights_file (a
// torch.save file of the zip, tar or legacy format, or a safetensors file), every tensor's
// data_crc32 computed; a file of another format is refused in the table's words. Bad bytes must end in
// vin::diagnostics::Error; what is described must count each tensor within its storage. Anything
// else (a crash, a read past a storage, a hang) is a finding.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string_view>

#include "vin/diagnostics/container/input_file.h"
#include "vin/diagnostics/formats/file_kind.h"
#include "vin/diagnostics/formats/weights_sets.h"
#include "vin/diagnostics/records/error.h"

namespace vd = vin::diagnostics;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  try {
    const vd::InputFilePtr file = vd::InputFile::from_bytes("fuzz.pt", bytes);
    vd::InspectDetails details;
    details.tensors = true;
    const vd::ClassifiedFile classified = vd::classify(file);
    if (!vd::is_weights_kind(classified.kind) || classified.kind == vd::FileKind::weights_index)
      return 0;  // a sharded set's index names other files: not this target's
    const vd::ModelMetadata model = vd::describe_weights_file(classified, details);
    // every listed tensor is within what the file holds
    for (const vd::ModuleMetadata& m : model.modules())
      for (const vd::TensorMetadata& t : m.details().tensors.value_or(
               std::vector<vd::TensorMetadata>{})) {
        if (t.numel < 0 || t.nbytes < 0) std::abort();
        if (!t.data_crc32 || t.data_crc32->size() != 8) std::abort();
      }
  } catch (const vd::Error&) {
  }
  return 0;
}
