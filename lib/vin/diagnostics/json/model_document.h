// Which records inspect-model prints for a model, in what order and under which key, declared
// once (issue 69): the jsonl writer (output_format), the `--format json` document (to_json of a
// ModelMetadata) and diff's reader of saved records (saved_records) all follow this table.
#pragma once

#include <functional>
#include <optional>

#include "vin/diagnostics/records/model_metadata.h"
#include "vin/diagnostics/records/record_value.h"

namespace vin::diagnostics {

/// A part of a model's records beside ModelMetadata's own fields.
enum class ModelPart {
  export_archive,      ///< a .pt2's container (ExportArchive)
  weights_file,        ///< a weights file's container (WeightsFile)
  graph_signature,     ///< a .pt2's graph signature (GraphSignature)
  methods,             ///< the signatures (MethodSignature)
  modules,             ///< each module (ModuleMetadata), then its tensors (TensorMetadata)
  operators,           ///< a .pt2's operator calls (OperatorCount)
  checkpoint_values,   ///< a checkpoint's values (CheckpointValue)
  checkpoint_tensors,  ///< a checkpoint's tensors outside its state dict (TensorMetadata)
};

struct ModelPartSpec {
  ModelPart part;
  const char* record;    ///< the record name of its jsonl lines
  const char* json_key;  ///< its key in the `--format json` document
  /// its lines come before ModelMetadata's (a container record: not the model, not compared)
  bool before_model;
};

/// The parts in jsonl order: the containers, ModelMetadata's line (not a part), then the rest.
extern const ModelPartSpec kModelParts[];
extern const std::size_t kModelPartCount;

/// The parts in the order of the `--format json` document's keys, after ModelMetadata's fields.
extern const ModelPart kModelDocumentOrder[];
extern const std::size_t kModelDocumentOrderCount;

/// The spec of `part`.
const ModelPartSpec& model_part(ModelPart part);

/// The jsonl records of `part` of `model` (record name, object without "record"), in order;
/// none where the model has none.
void for_each_part_record(const ModelMetadata& model, ModelPart part,
                          const std::function<void(const char* record, const Json& object)>& emit);

/// The `--format json` document's value of `part`, or nothing where the model has none.
std::optional<Json> part_document(const ModelMetadata& model, ModelPart part);

}  // namespace vin::diagnostics
