#include "vin/diagnostics/json/model_document.h"

#include <iterator>

#include "vin/diagnostics/json/json_encoding.h"

namespace vin::diagnostics {

const ModelPartSpec kModelParts[] = {
    {ModelPart::export_archive, "ExportArchive", "export_archive", true},
    {ModelPart::weights_file, "WeightsFile", "weights_file", true},
    {ModelPart::graph_signature, "GraphSignature", "graph_signature", false},
    {ModelPart::methods, "MethodSignature", "methods", false},
    {ModelPart::modules, "ModuleMetadata", "modules", false},
    {ModelPart::operators, "OperatorCount", "operators", false},
    // a checkpoint's other contents after its model (contract 11.2)
    {ModelPart::checkpoint_values, "CheckpointValue", "checkpoint_values", false},
    {ModelPart::checkpoint_tensors, "TensorMetadata", "checkpoint_tensors", false},
};
const std::size_t kModelPartCount = std::size(kModelParts);

const ModelPart kModelDocumentOrder[] = {
    ModelPart::export_archive, ModelPart::weights_file,      ModelPart::graph_signature,
    ModelPart::operators,      ModelPart::methods,           ModelPart::modules,
    ModelPart::checkpoint_values, ModelPart::checkpoint_tensors};
const std::size_t kModelDocumentOrderCount = std::size(kModelDocumentOrder);

const ModelPartSpec& model_part(ModelPart part) {
  for (const ModelPartSpec& spec : kModelParts)
    if (spec.part == part) return spec;
  return kModelParts[0];  // every part has a row
}

namespace {

template <class Items, class ToJson>
Json list_of(const Items& items, ToJson to) {
  Json list = Json::array();
  for (const auto& item : items) list.push_back(to(item));
  return list;
}

}  // namespace

void for_each_part_record(const ModelMetadata& model, ModelPart part,
                          const std::function<void(const char* record, const Json& object)>& emit) {
  const ModelDetails& d = model.details();
  const char* record = model_part(part).record;
  switch (part) {
    case ModelPart::export_archive:
      if (d.export_archive) emit(record, to_json(*d.export_archive));
      return;
    case ModelPart::weights_file:
      if (d.weights_file) emit(record, to_json(*d.weights_file));
      return;
    case ModelPart::graph_signature:
      if (d.graph_signature) emit(record, to_json(*d.graph_signature));
      return;
    case ModelPart::methods:
      if (d.methods)
        for (const auto& m : *d.methods) emit(record, to_json(m));
      return;
    case ModelPart::modules:
      for (const auto& m : model.modules()) {
        emit(record, to_json(m, /*with_tensors=*/false));
        if (const auto& tensors = m.details().tensors)
          for (const auto& t : *tensors) emit("TensorMetadata", to_json(t, m.path()));
      }
      return;
    case ModelPart::operators:
      if (d.operators)
        for (const auto& c : *d.operators) emit(record, to_json(c));
      return;
    case ModelPart::checkpoint_values:
      if (d.weights_file)
        for (const auto& v : d.weights_file->values) emit(record, to_json(v));
      return;
    case ModelPart::checkpoint_tensors:
      for (const auto& t : d.checkpoint_tensors) emit(record, to_json(t, kRootPath));
      return;
  }
}

std::optional<Json> part_document(const ModelMetadata& model, ModelPart part) {
  const ModelDetails& d = model.details();
  const auto to = [](const auto& item) { return to_json(item); };
  switch (part) {
    case ModelPart::export_archive:
      if (d.export_archive) return to_json(*d.export_archive);
      return std::nullopt;
    case ModelPart::weights_file:
      if (d.weights_file) return to_json(*d.weights_file);
      return std::nullopt;
    case ModelPart::graph_signature:
      if (d.graph_signature) return to_json(*d.graph_signature);
      return std::nullopt;
    case ModelPart::methods:
      if (d.methods) return list_of(*d.methods, to);
      return std::nullopt;
    case ModelPart::modules:
      return list_of(model.modules(), to);
    case ModelPart::operators:
      if (d.operators) return list_of(*d.operators, to);
      return std::nullopt;
    case ModelPart::checkpoint_values:
      if (d.weights_file && !d.weights_file->values.empty())
        return list_of(d.weights_file->values, to);
      return std::nullopt;
    case ModelPart::checkpoint_tensors:
      if (!d.checkpoint_tensors.empty())
        return list_of(d.checkpoint_tensors,
                       [](const TensorMetadata& t) { return to_json(t, kRootPath); });
      return std::nullopt;
  }
  return std::nullopt;
}

}  // namespace vin::diagnostics
