#include "vin/diagnostics/export_run/program_weights.h"

#include <ATen/Functions.h>
#include <torch/version.h>

#include <memory>

#include "vin/diagnostics/records/error.h"
#include "vin/diagnostics/text/printable.h"
#include "vin/diagnostics/torch/dtype_names.h"

namespace vin::diagnostics::export_run {

std::unordered_map<std::string, at::Tensor> make_program_weights(const ZipArchive& zip,
                                                                 const ExportProgram& program,
                                                                 const c10::Device& device) {
  ProgramStorages storages(zip);
  std::unordered_map<std::string, at::Tensor> bytes_of;  // each storage's bytes, on `device`
  std::unordered_map<std::string, at::Tensor> out;
  for (const ProgramWeight& w : program.weights) {
    const std::string where = program.file + ": the " + w.kind + " " + printable(w.name, 200);
    const auto type = scalar_type_of(*w.dtype);
    if (!type)
      throw Error(where + " is of dtype " + std::string(w.dtype->name) + ", which LibTorch " +
                  TORCH_VERSION + " has not");
    auto& bytes = bytes_of[w.storage];
    if (!bytes.defined()) {
      auto held = std::make_shared<std::string>(storages.read(w.storage));
      char* data = held->data();
      const auto size = static_cast<std::int64_t>(held->size());
      bytes = at::from_blob(
          data, {size}, [held](void*) mutable { held.reset(); },
          at::TensorOptions().dtype(at::kByte));
      if (!device.is_cpu()) bytes = bytes.to(device);
    }
    // the elements the view reaches must lie in the storage
    const std::int64_t element = w.dtype->element_size;
    std::int64_t last = w.storage_offset;
    bool empty = false;
    for (std::size_t d = 0; d < w.shape.size(); ++d) {
      if (w.shape[d] == 0) empty = true;
      if (w.shape[d] > 0) last += (w.shape[d] - 1) * w.strides[d];
    }
    if (!empty && (last + 1) * element > bytes.numel())
      throw Error(where + " reaches past the " + std::to_string(bytes.numel()) +
                  " bytes of its storage " + printable(w.storage, 200));
    at::Tensor t = at::empty({0}, at::TensorOptions().dtype(*type).device(bytes.device()));
    t.set_(bytes.storage(), w.storage_offset, w.shape, w.strides);
    out.emplace(w.name, std::move(t));
  }
  return out;
}

}  // namespace vin::diagnostics::export_run
