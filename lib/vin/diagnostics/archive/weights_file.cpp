#include "vin/diagnostics/archive/weights_file.h"

#include <utility>
#include <vector>

#include "vin/diagnostics/archive/safetensors_file.h"
#include "vin/diagnostics/archive/state_dict_model.h"
#include "vin/diagnostics/archive/zip_archive.h"
#include "vin/diagnostics/records/error.h"

namespace vin::diagnostics {
namespace {

ModelMetadata describe_safetensors(const InputFile& file, const InspectDetails& details) {
  const SafetensorsHeader header = read_safetensors_header(file);
  std::vector<StateDictTensor> tensors;
  tensors.reserve(header.tensors.size());
  for (const SafetensorsTensor& t : header.tensors) {
    StateDictTensor s;
    s.key = s.dict_key = t.key;
    s.dtype = t.dtype;
    s.shape = t.shape;
    s.numel = t.numel;
    s.nbytes = static_cast<std::int64_t>(t.end - t.begin);
    // a safetensors tensor's bytes are its elements, row-major and little-endian
    if (details.tensors) s.data_crc32 = crc32_text(crc32_of_range(file, t.begin, t.end));
    tensors.push_back(std::move(s));
  }
  WeightsFile weights;
  weights.file = file.path();
  weights.format = "safetensors";
  weights.metadata = header.metadata;
  return model_of_state_dict(file.path(), tensors, std::move(weights), details);
}

}  // namespace

bool is_weights_kind(FileKind kind) { return kind == FileKind::safetensors; }

ModelMetadata describe_weights_file(const ClassifiedFile& file, const InspectDetails& details) {
  if (file.kind == FileKind::safetensors)
    return naming_out_of_memory(file.path(), "reading the safetensors file",
                                [&] { return describe_safetensors(*file.file, details); });
  throw Error(file.path() + ": is " + std::string(describe(file.kind)) + ", not a weights file");
}

}  // namespace vin::diagnostics
