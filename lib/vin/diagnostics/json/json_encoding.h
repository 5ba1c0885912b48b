// JSON encoding of the records (docs/records.md): field names are the Python module's attribute
// names, key order its field order. `jsonl` lines carry a leading "record" key and are printed
// with Python's json.dumps separators, so the output is byte-for-byte what a Python peer prints.
#pragma once

#include <string>

#include "vin/diagnostics/records/capture_records.h"
#include "vin/diagnostics/records/compare_records.h"
#include "vin/diagnostics/records/config_records.h"
#include "vin/diagnostics/records/file_records.h"
#include "vin/diagnostics/records/model_metadata.h"
#include "vin/diagnostics/records/profile_records.h"
#include "vin/diagnostics/records/record_value.h"

namespace vin::diagnostics {

/// One ModuleMetadata as a JSON object, without the "record" key: its fields, `attributes` when
/// present, and `tensors` when present and `with_tensors` (the `json` document holds them; in
/// jsonl they are lines of their own).
Json to_json(const ModuleMetadata& module, bool with_tensors = true);

/// One TensorMetadata as a JSON object.
Json to_json(const TensorMetadata& tensor);

/// One TensorMetadata as a record of its own (a jsonl line; a checkpoint's tensors outside its
/// state dict in the `json` document): `module_path` first, then its fields.
Json to_json(const TensorMetadata& tensor, const std::string& module_path);

/// One MethodSignature as a JSON object.
Json to_json(const MethodSignature& method);

/// ModelMetadata's own fields (model_type, total_parameters, trainable_parameters, and
/// parameter_bytes and buffer_bytes when present): the jsonl header line, and the `json`
/// document without "methods" and "modules".
Json header_json(const ModelMetadata& model);

/// ModelMetadata as the `json` document: its fields and "modules" with every module inside.
Json to_json(const ModelMetadata& model);

/// One sampled value: a JSON integer, number or bool; non-finite floats as the strings "NaN",
/// "Infinity", "-Infinity".
Json to_json(const SampleValue& value);

/// One TensorSnapshot as a JSON object with its fields, without the "record" key.
Json to_json(const TensorSnapshot& snapshot);

/// The CaptureSummary fields: snapshots, sampled_bytes, stopped_by.
Json to_json(const CaptureSummary& summary);

/// One TensorComparison as a JSON object, without the "record" key.
Json to_json(const TensorComparison& comparison);

/// The ComparisonSummary fields.
Json to_json(const ComparisonSummary& summary);

/// One ModuleProfile as a JSON object, without the "record" key, in the contract's field order.
/// A count of FLOPs as JSON: an integer, exact past 64 bits (as Python's FlopCounterMode gives
/// it), null past 2^127 where it overflowed (flop_count.h).
Json flops_json(FlopCount count);

/// The multiply-adds of `flops` (every FLOP rule counts 2 per multiply-add: torchinfo's
/// "mult-adds", what fvcore calls flops), as flops_json writes counts.
Json macs_json(FlopCount flops);

Json to_json(const ModuleProfile& module);

/// A torch.export archive's ExportArchive record (contract 10.3).
Json to_json(const ExportArchive& archive);
/// A weights file's WeightsFile record (contract 11.2).
Json to_json(const WeightsFile& weights);
/// One of a checkpoint's values that are not tensors (contract 11.2).
Json to_json(const CheckpointValue& value);
/// scan's records (contract 14.2), without the "record" key.
Json to_json(const ScanFinding& finding);
Json to_json(const ScanSummary& summary);
/// One OperatorCount record (inspect-model --operators of a .pt2).
Json to_json(const OperatorCount& count);
/// A .pt2's GraphSignature record (inspect-model --signature).
Json to_json(const GraphSignature& signature);

/// One OperatorProfile as a JSON object, without the "record" key.
Json to_json(const OperatorProfile& op);

/// The ProfileSummary as a JSON object, without the "record" key.
Json to_json(const ProfileSummary& summary);

/// A field value: a JSON scalar, or {"type_marker": "qualified.Type"}.
Json to_json(const ConfigValue& value);

/// One ConfigFieldSpec as a JSON object, without the "record" key.
Json to_json(const ConfigFieldSpec& field);

/// ModelStructureSpec's own fields (config_type, target_type): the jsonl header line, and the
/// `json` document without "fields".
Json header_json(const ModelStructureSpec& spec);

/// ModelStructureSpec as the `json` document: config_type, target_type, and "fields".
Json to_json(const ModelStructureSpec& spec);

/// Python's repr() of a float ("0.1", "1e-05", "1e+16", "NaN", "Infinity").
std::string python_float_text(double value);

/// One line of JSON as Python's json.dumps writes it: ", " and ": " separators, floats as
/// Python's repr (shortest text that reads back to the same double), non-finite floats as
/// strings, non-ASCII escaped as \uXXXX, a byte that is not valid UTF-8 as the lone surrogate
/// \udc80-\udcff (Python's surrogateescape, which parse_bounded_json reads back). No trailing
/// newline.
std::string dump_line(const Json& value);

/// One `jsonl` record line: dump_line of `object` with "record": `record_name` as its first key.
std::string dump_record_line(const char* record_name, const Json& object);

/// json.dumps(value, indent=2): the same text rules, one item a line. No trailing newline.
std::string dump_pretty(const Json& value);

}  // namespace vin::diagnostics
