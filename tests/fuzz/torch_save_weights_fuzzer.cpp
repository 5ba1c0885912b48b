// Fuzz target: one torch.save file read as weights, in the zip format (bytes starting PK), the
// tar format of PyTorch 0.1-0.3 (a ustar header's magic at byte 257) or the legacy one (anything
// else): TorchSaveZip, TorchSaveTar or LegacyTorchSave, then describe_torch_save with
// every tensor's data_crc32, as `inspect-model FILE --tensors` reads it. Bad bytes must end in
// vin::diagnostics::Error; what is described must count each tensor within its storage. Anything
// else (a crash, a read past a storage, a hang) is a finding.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string_view>

#include "vin/diagnostics/archive/input_file.h"
#include "vin/diagnostics/archive/legacy_torch_save.h"
#include "vin/diagnostics/archive/torch_save_file.h"
#include "vin/diagnostics/archive/torch_save_tar.h"
#include "vin/diagnostics/archive/weights_file.h"
#include "vin/diagnostics/archive/zip_archive.h"
#include "vin/diagnostics/records/error.h"

namespace vd = vin::diagnostics;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  try {
    const vd::InputFilePtr file = vd::InputFile::from_bytes("fuzz.pt", bytes);
    vd::InspectDetails details;
    details.tensors = true;
    vd::ModelMetadata model = [&] {
      if (bytes.substr(0, 2) == "PK") {
        const vd::ZipArchive zip(file);
        return vd::describe_torch_save(vd::TorchSaveZip(zip, file->path(), 1 << 24), details);
      }
      if (bytes.size() > 262 && bytes.substr(257, 5) == "ustar")
        return vd::describe_torch_save(vd::TorchSaveTar(file), details);
      return vd::describe_torch_save(vd::LegacyTorchSave(file), details);
    }();
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
