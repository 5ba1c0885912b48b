// The field tables (record_fields.h) and the JSON encoding of every record made from them.
#include "vin/diagnostics/json/record_fields.h"

#include <stdexcept>

#include "vin/diagnostics/json/json_encoding.h"

namespace vin::diagnostics {
namespace {

constexpr Presence detail = Presence::with_detail;

template <class T>
Json or_null(const std::optional<T>& value) {
  return value ? Json(*value) : Json(nullptr);
}

Json float_or_null(const std::optional<double>& value) {
  return value ? json_float(*value) : Json(nullptr);
}

// --- inspect-model --------------------------------------------------------------------------

constexpr Field<ModelMetadata> kModelFields[] = {
    {"model_type", [](const ModelMetadata& m) { return or_null(m.model_type()); }},
    {"total_parameters", [](const ModelMetadata& m) { return Json(m.total_parameters()); }},
    {"trainable_parameters",
     [](const ModelMetadata& m) { return or_null(m.trainable_parameters()); }},
    {"parameter_bytes",
     [](const ModelMetadata& m) {
       const auto& bytes = m.details().parameter_bytes;
       return bytes ? Json(*bytes) : absent_field();
     },
     detail},
    {"buffer_bytes",
     [](const ModelMetadata& m) {
       // null with --tensors where the file does not tell buffers from parameters
       const auto& bytes = m.details().buffer_bytes;
       return bytes                          ? Json(*bytes)
              : m.details().parameter_bytes ? Json(nullptr)
                                             : absent_field();
     },
     detail},
    {"stopped_by",
     [](const ModelMetadata& m) {
       const auto& why = m.details().stopped_by;
       return why ? Json(*why) : absent_field();
     },
     detail, false},
};

constexpr Field<ModuleMetadata> kModuleFields[] = {
    {"path", [](const ModuleMetadata& m) { return Json(m.path()); }},
    {"module_type", [](const ModuleMetadata& m) { return or_null(m.module_type()); }},
    {"direct_parameters", [](const ModuleMetadata& m) { return Json(m.direct_parameters()); }},
    {"trainable_parameters",
     [](const ModuleMetadata& m) { return or_null(m.trainable_parameters()); }},
    {"direct_buffers", [](const ModuleMetadata& m) { return or_null(m.direct_buffers()); }},
    {"training", [](const ModuleMetadata& m) { return or_null(m.training()); }},
    {"attributes",
     [](const ModuleMetadata& m) {
       const auto& attributes = m.details().attributes;
       return attributes ? Json(*attributes) : absent_field();
     },
     detail},
    // `tensors` (with --tensors, in the json document only) is added by to_json: in jsonl each
    // tensor is a TensorMetadata line of its own
};

constexpr Field<TensorMetadata> kTensorFields[] = {
    {"name", [](const TensorMetadata& t) { return Json(t.name); }},
    {"kind", [](const TensorMetadata& t) { return Json(t.kind); }},
    {"shape", [](const TensorMetadata& t) { return Json(t.shape); }},
    {"dtype", [](const TensorMetadata& t) { return Json(t.dtype); }},
    {"device", [](const TensorMetadata& t) { return or_null(t.device); }},
    {"requires_grad", [](const TensorMetadata& t) { return or_null(t.requires_grad); }},
    {"numel", [](const TensorMetadata& t) { return Json(t.numel); }},
    {"nbytes", [](const TensorMetadata& t) { return Json(t.nbytes); }},
    {"storage_crc32", [](const TensorMetadata& t) { return or_null(t.storage_crc32); }},
    // a weights file's tensors (contract 11.2)
    // a tensor is matched by its module path and name; its key from the file's root and the
    // keys it shares a storage with differ with the nesting (a checkpoint's `model.`): not
    // compared
    {"key", [](const TensorMetadata& t) { return t.key ? Json(*t.key) : absent_field(); },
     detail, false},
    {"file", [](const TensorMetadata& t) { return t.file ? Json(*t.file) : absent_field(); },
     detail, false},
    {"shared_with",
     [](const TensorMetadata& t) { return t.key ? Json(t.shared_with) : absent_field(); },
     detail, false},
    {"data_crc32",
     [](const TensorMetadata& t) { return t.data_crc32 ? Json(*t.data_crc32) : absent_field(); },
     detail},
};

// a torch.export tensor's dtype and shape, after the fields that name it
void put_tensor(Json& j, const std::optional<TensorSpec>& tensor) {
  if (!tensor) return;
  j["dtype"] = tensor->dtype;
  j["shape"] = tensor->shape;
}

constexpr Field<MethodSignature> kMethodFields[] = {
    {"name", [](const MethodSignature& m) { return Json(m.name); }},
    {"arguments",
     [](const MethodSignature& m) {
       Json arguments = Json::array();
       for (const auto& a : m.arguments) {
         Json j = Json::object({{"name", a.name},
                                {"type", a.type},
                                {"has_default", a.has_default},
                                {"default", a.default_value}});
         put_tensor(j, a.tensor);
         arguments.push_back(std::move(j));
       }
       return arguments;
     }},
    {"returns", [](const MethodSignature& m) { return Json(m.returns); }},
    {"outputs",
     [](const MethodSignature& m) {
       if (!m.outputs) return absent_field();
       Json outputs = Json::array();
       for (const auto& r : *m.outputs) {
         Json j = Json::object({{"name", or_null(r.name)}, {"type", r.type}});
         put_tensor(j, r.tensor);
         outputs.push_back(std::move(j));
       }
       return outputs;
     },
     detail},
    {"dimensions",
     [](const MethodSignature& m) {
       if (!m.dimensions) return absent_field();
       Json dimensions = Json::array();
       for (const auto& d : *m.dimensions)
         dimensions.push_back(
             Json::object({{"name", d.name}, {"min", or_null(d.min)}, {"max", or_null(d.max)}}));
       return dimensions;
     },
     detail},
};

// --- inspect-config -------------------------------------------------------------------------

constexpr Field<ModelStructureSpec> kSpecFields[] = {
    {"config_type", [](const ModelStructureSpec& s) { return or_null(s.config_type()); }},
    {"target_type", [](const ModelStructureSpec& s) { return or_null(s.target_type()); }},
};

constexpr Field<ConfigFieldSpec> kConfigFieldFields[] = {
    {"path", [](const ConfigFieldSpec& f) { return Json(f.path()); }},
    {"declared_type", [](const ConfigFieldSpec& f) { return or_null(f.declared_type()); }},
    {"configured_type", [](const ConfigFieldSpec& f) { return Json(f.configured_type()); }},
    {"value", [](const ConfigFieldSpec& f) { return to_json(f.value()); }},
};

// --- capture --------------------------------------------------------------------------------

constexpr Field<TensorSnapshot> kSnapshotFields[] = {
    {"module_path", [](const TensorSnapshot& s) { return Json(s.module_path()); }},
    {"call_index", [](const TensorSnapshot& s) { return Json(s.call_index()); }},
    {"direction", [](const TensorSnapshot& s) { return Json(to_string(s.direction())); }},
    {"tensor_path", [](const TensorSnapshot& s) { return Json(s.tensor_path()); }},
    {"shape", [](const TensorSnapshot& s) { return Json(s.shape()); }},
    {"dtype", [](const TensorSnapshot& s) { return Json(s.dtype()); }},
    {"device", [](const TensorSnapshot& s) { return Json(s.device()); }},
    {"numel", [](const TensorSnapshot& s) { return Json(s.numel()); }},
    {"sampled_bytes", [](const TensorSnapshot& s) { return Json(s.sampled_bytes()); }},
    {"values",
     [](const TensorSnapshot& s) {
       Json values = Json::array();
       for (const auto& v : s.values()) values.push_back(to_json(v));
       return values;
     }},
    {"sample_omission_reason",
     [](const TensorSnapshot& s) { return or_null(s.sample_omission_reason()); }},
    {"stats",
     [](const TensorSnapshot& s) {
       if (!s.stats()) return absent_field();
       if (s.stats()->entries.empty()) return Json(nullptr);
       Json stats;
       for (const auto& [name, value] : s.stats()->entries)
         stats[name] = std::visit([](auto v) { return Json(v); }, value);
       return stats;
     },
     detail},
};

Json location_json(const CaptureSummary& s) {
  const auto& at = s.first_nonfinite;
  if (!at) return Json(nullptr);
  return Json::object({{"module_path", at->module_path},
                       {"call_index", at->call_index},
                       {"direction", to_string(at->direction)},
                       {"tensor_path", at->tensor_path},
                       {"recorded", at->recorded}});
}

constexpr Field<CaptureSummary> kCaptureSummaryFields[] = {
    {"snapshots", [](const CaptureSummary& s) { return Json(s.snapshots); }},
    {"sampled_bytes", [](const CaptureSummary& s) { return Json(s.sampled_bytes); }},
    {"stopped_by", [](const CaptureSummary& s) { return or_null(s.stopped_by); }},
    {"first_nonfinite",
     [](const CaptureSummary& s) { return s.with_stats ? location_json(s) : absent_field(); },
     detail},
    {"checked_tensors",
     [](const CaptureSummary& s) {
       return s.with_stats ? Json(s.checked_tensors) : absent_field();
     },
     detail},
    {"nonfinite_tensors",
     [](const CaptureSummary& s) {
       return s.with_stats ? Json(s.nonfinite_tensors) : absent_field();
     },
     detail},
    {"saved_tensors",
     [](const CaptureSummary& s) { return s.saved ? Json(s.saved->tensors) : absent_field(); },
     detail},
    {"saved_bytes",
     [](const CaptureSummary& s) { return s.saved ? Json(s.saved->bytes) : absent_field(); },
     detail},
    {"unsaved_tensors",
     [](const CaptureSummary& s) { return s.saved ? Json(s.saved->unsaved) : absent_field(); },
     detail},
    {"seed", [](const CaptureSummary& s) { return s.seed ? Json(s.seed) : absent_field(); },
     detail},
    {"runner", [](const CaptureSummary& s) { return s.runner ? Json(*s.runner) : absent_field(); },
     detail},
};

// --- compare --------------------------------------------------------------------------------

Json key_json(const TensorKey& key) {
  return Json::object({{"module_path", key.module_path},
                       {"call_index", key.call_index},
                       {"direction", to_string(key.direction)},
                       {"tensor_path", key.tensor_path}});
}

constexpr Field<TensorComparison> kComparisonFields[] = {
    {"module_path", [](const TensorComparison& c) { return Json(c.key.module_path); }},
    {"call_index", [](const TensorComparison& c) { return Json(c.key.call_index); }},
    {"direction", [](const TensorComparison& c) { return Json(to_string(c.key.direction)); }},
    {"tensor_path", [](const TensorComparison& c) { return Json(c.key.tensor_path); }},
    {"shape_a", [](const TensorComparison& c) { return or_null(c.shape_a); }},
    {"shape_b", [](const TensorComparison& c) { return or_null(c.shape_b); }},
    {"dtype_a", [](const TensorComparison& c) { return or_null(c.dtype_a); }},
    {"dtype_b", [](const TensorComparison& c) { return or_null(c.dtype_b); }},
    {"numel", [](const TensorComparison& c) { return Json(c.numel); }},
    {"max_abs_error", [](const TensorComparison& c) { return float_or_null(c.max_abs_error); }},
    {"max_rel_error", [](const TensorComparison& c) { return float_or_null(c.max_rel_error); }},
    {"mismatches", [](const TensorComparison& c) { return or_null(c.mismatches); }},
    {"atol", [](const TensorComparison& c) { return json_float(c.atol); }},
    {"rtol", [](const TensorComparison& c) { return json_float(c.rtol); }},
    {"within_tolerance", [](const TensorComparison& c) { return Json(c.within_tolerance); }},
    {"only_in", [](const TensorComparison& c) { return or_null(c.only_in); }},
    {"statistics_only", [](const TensorComparison& c) { return Json(c.statistics_only); }},
    {"tensor_path_b", [](const TensorComparison& c) { return or_null(c.tensor_path_b); }},
    {"structure_differs", [](const TensorComparison& c) { return Json(c.structure_differs); }},
};

constexpr Field<ComparisonSummary> kComparisonSummaryFields[] = {
    {"pairs", [](const ComparisonSummary& s) { return Json(s.pairs); }},
    {"within", [](const ComparisonSummary& s) { return Json(s.within); }},
    {"beyond", [](const ComparisonSummary& s) { return Json(s.beyond); }},
    {"only_in_a", [](const ComparisonSummary& s) { return Json(s.only_in_a); }},
    {"only_in_b", [](const ComparisonSummary& s) { return Json(s.only_in_b); }},
    {"structure_differences",
     [](const ComparisonSummary& s) { return Json(s.structure_differences); }},
    {"first_divergence",
     [](const ComparisonSummary& s) {
       return s.first_divergence ? key_json(*s.first_divergence) : Json(nullptr);
     }},
    {"atol", [](const ComparisonSummary& s) { return float_or_null(s.atol); }},
    {"rtol", [](const ComparisonSummary& s) { return float_or_null(s.rtol); }},
    {"statistics_only", [](const ComparisonSummary& s) { return Json(s.statistics_only); }},
    {"seed", [](const ComparisonSummary& s) { return Json(s.seed); }},
};

// --- profile: diff compares what does not depend on the machine (contract 8) ---------------

constexpr bool not_compared = false;  // what depends on the machine or the run

// a time or a byte count of a profile, null where the run measured none (the meta device)
template <class Record, class Value>
Json measured(const Record& record, Value value) {
  return record.measured ? Json(value) : Json(nullptr);
}

constexpr Field<ModuleProfile> kModuleProfileFields[] = {
    {"module_path", [](const ModuleProfile& m) { return Json(m.module_path); }},
    // its type is compared as part of the module: a path is one module in both profiles
    {"module_type", [](const ModuleProfile& m) { return Json(m.module_type); }, Presence::always,
     not_compared},
    {"calls", [](const ModuleProfile& m) { return Json(m.calls); }},
    {"parameters", [](const ModuleProfile& m) { return Json(m.parameters); }},
    {"input_shapes", [](const ModuleProfile& m) { return Json(m.input_shapes); }},
    {"output_shapes", [](const ModuleProfile& m) { return Json(m.output_shapes); }},
    {"flops", [](const ModuleProfile& m) { return flops_json(m.flops); }},
    // with_detail: not required of a record read back, so that diff still reads profiles
    // written before macs was (compared where both sides have it)
    {"macs", [](const ModuleProfile& m) { return macs_json(m.flops); }, detail},
    {"self_flops", [](const ModuleProfile& m) { return flops_json(m.self_flops); }},
    {"time_ms", [](const ModuleProfile& m) { return measured(m, m.time_ms); }, Presence::always,
     not_compared},
    {"self_time_ms", [](const ModuleProfile& m) { return measured(m, m.self_time_ms); },
     Presence::always, not_compared},
    {"allocated_bytes", [](const ModuleProfile& m) { return measured(m, m.allocated_bytes); },
     Presence::always, not_compared},
    {"peak_bytes", [](const ModuleProfile& m) { return measured(m, m.peak_bytes); },
     Presence::always, not_compared},
    // why a module has no child records: present where some child ran none of its modules (as
    // LibTorch's version and the fast path decide, so not compared)
    {"uncalled_children",
     [](const ModuleProfile& m) {
       return m.uncalled_children.empty() ? absent_field() : Json(m.uncalled_children);
     },
     detail, not_compared},
    {"called_instead",
     [](const ModuleProfile& m) {
       return m.uncalled_children.empty() ? absent_field() : Json(m.work_operators);
     },
     detail, not_compared},
};

constexpr Field<OperatorProfile> kOperatorProfileFields[] = {
    {"operator", [](const OperatorProfile& o) { return Json(o.name); }},
    {"calls", [](const OperatorProfile& o) { return Json(o.calls); }},
    {"flops", [](const OperatorProfile& o) { return flops_json(o.flops); }},
    {"macs", [](const OperatorProfile& o) { return macs_json(o.flops); }, detail},
    {"time_ms", [](const OperatorProfile& o) { return measured(o, o.time_ms); }, Presence::always,
     not_compared},
    // with_detail: profiles written before it read back
    {"self_time_ms", [](const OperatorProfile& o) { return measured(o, o.self_time_ms); }, detail,
     not_compared},
};

constexpr bool environment = true;  // a Field's `environment`

Json inputs_json(const ProfileInputs& inputs) {
  if (inputs.file)
    return Json::object({{"file", *inputs.file}, {"sha256", or_null(inputs.sha256)}});
  Json shapes = Json::array();
  for (const ProfileShape& s : inputs.shapes)
    shapes.push_back(Json::object({{"name", s.name}, {"shape", s.shape}, {"dtype", s.dtype}}));
  return Json::object({{"shapes", std::move(shapes)}});
}

constexpr Field<ProfileSummary> kProfileSummaryFields[] = {
    {"device", [](const ProfileSummary& s) { return Json(s.device); }, Presence::always,
     not_compared, environment},
    {"device_name", [](const ProfileSummary& s) { return Json(s.device_name); }, Presence::always,
     not_compared, environment},
    {"threads",
     [](const ProfileSummary& s) {
       return Json::object({{"intra_op", s.threads.intra_op}, {"inter_op", s.threads.inter_op}});
     },
     Presence::always, not_compared, environment},
    {"mode", [](const ProfileSummary& s) { return Json(s.mode); }, Presence::always, not_compared,
     environment},
    // with_detail: profiles written before it read back
    {"runner", [](const ProfileSummary& s) { return Json(s.runner); }, detail, not_compared,
     environment},
    {"warmup", [](const ProfileSummary& s) { return Json(s.warmup); }, Presence::always,
     not_compared},
    {"runs", [](const ProfileSummary& s) { return Json(s.runs); }, Presence::always, not_compared},
    {"latency_ms",
     [](const ProfileSummary& s) {
       if (!s.measured) return Json(nullptr);
       return Json::object({{"min", s.latency_ms.min},
                            {"median", s.latency_ms.median},
                            {"mean", s.latency_ms.mean},
                            {"p90", s.latency_ms.p90},
                            {"max", s.latency_ms.max}});
     },
     Presence::always, not_compared},
    {"throughput", [](const ProfileSummary& s) { return measured(s, s.throughput); },
     Presence::always, not_compared},
    {"warnings", [](const ProfileSummary& s) { return Json(s.warnings); }, Presence::always,
     not_compared},
    {"flops", [](const ProfileSummary& s) { return flops_json(s.flops); }},
    {"macs", [](const ProfileSummary& s) { return macs_json(s.flops); }, detail},
    {"uncounted_operators",
     [](const ProfileSummary& s) {
       Json list = Json::array();
       for (const UncountedOperator& o : s.uncounted_operators)
         list.push_back(Json::object({{"name", o.name},
                                      {"calls", o.calls},
                                      {"time_ms", measured(s, o.time_ms)}}));
       return list;
     },
     Presence::always, not_compared},
    {"flops_complete", [](const ProfileSummary& s) { return Json(s.uncounted_operators.empty()); },
     Presence::always, not_compared},
    {"instrumented_ms", [](const ProfileSummary& s) { return measured(s, s.instrumented_ms); },
     Presence::always, not_compared},
    // with_detail: profiles written before it read back
    {"overhead",
     [](const ProfileSummary& s) {
       if (!s.measured) return Json(nullptr);
       return Json::object({{"ms", s.overhead.ms},
                            {"module_event_us", s.overhead.module_event_us},
                            {"operator_event_us", s.overhead.operator_event_us}});
     },
     detail, not_compared},
    {"peak_bytes", [](const ProfileSummary& s) { return measured(s, s.peak_bytes); },
     Presence::always, not_compared},
    {"parameter_bytes", [](const ProfileSummary& s) { return Json(s.parameter_bytes); }},
    {"buffer_bytes", [](const ProfileSummary& s) { return Json(s.buffer_bytes); }},
    {"modules", [](const ProfileSummary& s) { return Json(s.modules); }, Presence::always,
     not_compared},
    {"operators", [](const ProfileSummary& s) { return Json(s.operators); }, Presence::always,
     not_compared},
    // what the OperatorProfile records count; with_detail: profiles written before it read back
    {"nested_operators", [](const ProfileSummary& s) { return Json(s.nested_operators); }, detail,
     not_compared, environment},
    {"inputs", [](const ProfileSummary& s) { return inputs_json(s.inputs); }, Presence::always,
     not_compared, environment},
    {"seed", [](const ProfileSummary& s) { return Json(s.seed); }, Presence::always, not_compared},
    {"torch_version", [](const ProfileSummary& s) { return Json(s.torch_version); },
     Presence::always, not_compared, environment},
    {"vin_inspect_version", [](const ProfileSummary& s) { return Json(s.vin_inspect_version); },
     Presence::always, not_compared},
    {"schema_version", [](const ProfileSummary&) { return Json(kRecordSchemaVersion); },
     Presence::always, not_compared},
    // every count is at most the forward's: when any overflowed, this one did
    {"flops_overflowed",
     [](const ProfileSummary& s) {
       return flops_overflowed(s.flops) ? Json(true) : absent_field();
     },
     detail, not_compared},
};

// --- torch.export ---------------------------------------------------------------------------

// the container, not the model: two archives of one model may differ in all of it
constexpr Field<ExportArchive> kExportArchiveFields[] = {
    {"file", [](const ExportArchive& a) { return Json(a.file); }, Presence::always, not_compared},
    {"layout", [](const ExportArchive& a) { return Json(a.layout); }, Presence::always,
     not_compared},
    {"schema_version", [](const ExportArchive& a) { return or_null(a.schema_version); },
     Presence::always, not_compared},
    {"torch_version", [](const ExportArchive& a) { return or_null(a.torch_version); },
     Presence::always, not_compared},
    {"models", [](const ExportArchive& a) { return Json(a.models); }, Presence::always,
     not_compared},
    {"extra_files", [](const ExportArchive& a) { return Json(a.extra_files); }, Presence::always,
     not_compared},
    {"aoti",
     [](const ExportArchive& a) {
       if (!a.aoti) return absent_field();
       Json models = Json::array();
       for (const auto& m : *a.aoti)
         models.push_back(Json::object({{"model", m.model},
                                        {"device", or_null(m.device)},
                                        {"platform", or_null(m.platform)}}));
       return models;
     },
     detail, not_compared},
};

Json entries_json(const std::vector<GraphSignatureEntry>& entries) {
  Json list = Json::array();
  for (const auto& e : entries)
    list.push_back(
        Json::object({{"kind", e.kind}, {"name", or_null(e.name)}, {"target", or_null(e.target)}}));
  return list;
}

constexpr Field<GraphSignature> kGraphSignatureFields[] = {
    {"inputs", [](const GraphSignature& g) { return entries_json(g.inputs); }},
    {"outputs", [](const GraphSignature& g) { return entries_json(g.outputs); }},
};

constexpr Field<OperatorCount> kOperatorCountFields[] = {
    {"module_path", [](const OperatorCount& c) { return Json(c.module_path); }},
    {"operator", [](const OperatorCount& c) { return Json(c.op); }},
    {"calls", [](const OperatorCount& c) { return Json(c.calls); }},
};

// --- diff -----------------------------------------------------------------------------------

constexpr Field<Change> kChangeFields[] = {
    {"kind", [](const Change& c) { return Json(c.kind); }},
    {"subject", [](const Change& c) { return Json(c.subject); }},
    {"path", [](const Change& c) { return c.path; }},
    {"field", [](const Change& c) { return c.field; }},
    {"old", [](const Change& c) { return c.old_value; }},
    {"new", [](const Change& c) { return c.new_value; }},
    {"within_tolerance",
     [](const Change& c) {
       return c.within_tolerance ? Json(*c.within_tolerance) : absent_field();
     },
     detail},
};

constexpr Field<DiffSummary> kDiffSummaryFields[] = {
    {"kind", [](const DiffSummary& s) { return Json(s.kind); }},
    {"old", [](const DiffSummary& s) { return Json(s.old_source); }},
    {"new", [](const DiffSummary& s) { return Json(s.new_source); }},
    {"added", [](const DiffSummary& s) { return Json(s.added); }},
    {"removed", [](const DiffSummary& s) { return Json(s.removed); }},
    {"changed", [](const DiffSummary& s) { return Json(s.changed); }},
    {"within_tolerance", [](const DiffSummary& s) { return Json(s.within_tolerance); }},
    {"environment", [](const DiffSummary& s) { return Json(s.environment); }},
    {"identical", [](const DiffSummary& s) { return Json(s.identical); }},
    {"compared", [](const DiffSummary& s) { return Json(s.compared); }},
};

template <class R, std::size_t N>
RecordInfo info_of(const char* record, const Field<R> (&fields)[N]) {
  RecordInfo info{record, {}};
  for (const Field<R>& f : fields)
    info.fields.push_back({f.name, f.presence, f.compared, f.environment});
  return info;
}

// --- weights files --------------------------------------------------------------------------

// the container, not the model: the same weights as a state dict and as safetensors differ in
// all of it but dtypes, which their tensors already say
constexpr Field<WeightsFile> kWeightsFileFields[] = {
    {"file", [](const WeightsFile& w) { return Json(w.file); }, Presence::always, not_compared},
    {"format", [](const WeightsFile& w) { return Json(w.format); }, Presence::always, not_compared},
    {"files", [](const WeightsFile& w) { return Json(w.files); }, Presence::always, not_compared},
    {"state_dict_path", [](const WeightsFile& w) { return w.state_dict_path; }, Presence::always,
     not_compared},
    {"metadata", [](const WeightsFile& w) { return w.metadata; }, Presence::always, not_compared},
    {"dtypes",
     [](const WeightsFile& w) {
       Json dtypes = Json::object();
       for (const auto& [dtype, elements] : w.dtypes) dtypes[dtype] = elements;
       return dtypes;
     },
     Presence::always, not_compared},
};

// a checkpoint's other values: the container's too (diff does not compare them)
constexpr Field<CheckpointValue> kCheckpointValueFields[] = {
    {"key", [](const CheckpointValue& v) { return Json(v.key); }, Presence::always, not_compared},
    {"type", [](const CheckpointValue& v) { return Json(v.type); }, Presence::always,
     not_compared},
    {"value", [](const CheckpointValue& v) { return v.value; }, Presence::always, not_compared},
};

// scan's: nothing of them is compared (diff does not take scan's records)
template <class T>
Json optional_json(const std::optional<T>& value) {
  return value ? Json(*value) : Json(nullptr);
}
constexpr Field<ScanFinding> kScanFindingFields[] = {
    {"file", [](const ScanFinding& f) { return Json(f.file); }, Presence::always, not_compared},
    {"member", [](const ScanFinding& f) { return optional_json(f.member); }, Presence::always,
     not_compared},
    {"offset", [](const ScanFinding& f) { return optional_json(f.offset); }, Presence::always,
     not_compared},
    {"kind", [](const ScanFinding& f) { return Json(f.kind); }, Presence::always, not_compared},
    {"name", [](const ScanFinding& f) { return Json(f.name); }, Presence::always, not_compared},
    {"severity", [](const ScanFinding& f) { return Json(f.severity); }, Presence::always,
     not_compared},
    {"called", [](const ScanFinding& f) { return Json(f.called); }, Presence::always,
     not_compared},
    {"reason", [](const ScanFinding& f) { return Json(f.reason); }, Presence::always,
     not_compared},
};
constexpr Field<ScanSummary> kScanSummaryFields[] = {
    {"file", [](const ScanSummary& s) { return Json(s.file); }, Presence::always, not_compared},
    {"format", [](const ScanSummary& s) { return Json(s.format); }, Presence::always,
     not_compared},
    {"verdict", [](const ScanSummary& s) { return Json(s.verdict); }, Presence::always,
     not_compared},
    {"globals", [](const ScanSummary& s) { return Json(s.globals); }, Presence::always,
     not_compared},
    {"findings", [](const ScanSummary& s) { return Json(s.findings); }, Presence::always,
     not_compared},
    {"torch_version", [](const ScanSummary& s) { return Json(s.torch_version); },
     Presence::always, not_compared},
    {"torch_weights_only", [](const ScanSummary& s) { return optional_json(s.torch_weights_only); },
     Presence::always, not_compared},
};

}  // namespace

const std::vector<RecordInfo>& record_infos() {
  static const std::vector<RecordInfo> infos = [] {
    std::vector<RecordInfo> all = {
        info_of("ModelMetadata", kModelFields),
        info_of("ModuleMetadata", kModuleFields),
        info_of("TensorMetadata", kTensorFields),
        info_of("MethodSignature", kMethodFields),
        info_of("ModelStructureSpec", kSpecFields),
        info_of("ConfigFieldSpec", kConfigFieldFields),
        info_of("TensorSnapshot", kSnapshotFields),
        info_of("CaptureSummary", kCaptureSummaryFields),
        info_of("TensorComparison", kComparisonFields),
        info_of("ComparisonSummary", kComparisonSummaryFields),
        info_of("ModuleProfile", kModuleProfileFields),
        info_of("OperatorProfile", kOperatorProfileFields),
        info_of("ProfileSummary", kProfileSummaryFields),
        info_of("ExportArchive", kExportArchiveFields),
        info_of("WeightsFile", kWeightsFileFields),
        info_of("CheckpointValue", kCheckpointValueFields),
        info_of("OperatorCount", kOperatorCountFields),
        info_of("GraphSignature", kGraphSignatureFields),
        info_of("Change", kChangeFields),
        info_of("DiffSummary", kDiffSummaryFields),
        info_of("ScanFinding", kScanFindingFields),
        info_of("ScanSummary", kScanSummaryFields),
    };
    // the json document's module entries hold their tensors (docs/records.md)
    for (RecordInfo& info : all)
      if (std::string_view(info.record) == "ModuleMetadata")
        info.fields.push_back({"tensors", Presence::with_detail, true});
    return all;
  }();
  return infos;
}

const RecordInfo& record_info(std::string_view record) {
  for (const RecordInfo& info : record_infos())
    if (record == info.record) return info;
  throw std::logic_error("record_info: no record named " + std::string(record));
}

std::vector<const char*> required_fields(std::string_view record) {
  std::vector<const char*> names;
  for (const FieldInfo& f : record_info(record).fields)
    if (f.presence == Presence::always && f.compared) names.push_back(f.name);
  return names;
}

std::vector<const char*> compared_fields(std::string_view record) {
  std::vector<const char*> names;
  for (const FieldInfo& f : record_info(record).fields)
    if (f.compared) names.push_back(f.name);
  return names;
}

std::vector<const char*> environment_fields(std::string_view record) {
  std::vector<const char*> names;
  for (const FieldInfo& f : record_info(record).fields)
    if (f.environment) names.push_back(f.name);
  return names;
}

Json header_json(const ModelMetadata& model) { return encode_fields(kModelFields, model); }

Json to_json(const ModuleMetadata& module, bool with_tensors) {
  Json j = encode_fields(kModuleFields, module);
  if (const auto& tensors = module.details().tensors; tensors && with_tensors) {
    Json list = Json::array();
    for (const auto& t : *tensors) list.push_back(to_json(t));
    j["tensors"] = std::move(list);
  }
  return j;
}

Json to_json(const TensorMetadata& tensor) { return encode_fields(kTensorFields, tensor); }
Json to_json(const TensorMetadata& tensor, const std::string& module_path) {
  Json line;
  line["module_path"] = module_path;
  Json fields = to_json(tensor);
  for (auto& [key, value] : fields.items()) line[key] = std::move(value);
  return line;
}
Json to_json(const MethodSignature& method) { return encode_fields(kMethodFields, method); }
Json header_json(const ModelStructureSpec& spec) { return encode_fields(kSpecFields, spec); }
Json to_json(const ConfigFieldSpec& field) { return encode_fields(kConfigFieldFields, field); }
Json to_json(const TensorSnapshot& snapshot) { return encode_fields(kSnapshotFields, snapshot); }
Json to_json(const CaptureSummary& summary) {
  return encode_fields(kCaptureSummaryFields, summary);
}
Json to_json(const TensorComparison& c) { return encode_fields(kComparisonFields, c); }
Json to_json(const ComparisonSummary& s) { return encode_fields(kComparisonSummaryFields, s); }
Json to_json(const ModuleProfile& module) { return encode_fields(kModuleProfileFields, module); }
Json to_json(const OperatorProfile& op) { return encode_fields(kOperatorProfileFields, op); }
Json to_json(const ProfileSummary& summary) {
  return encode_fields(kProfileSummaryFields, summary);
}
Json to_json(const Change& change) { return encode_fields(kChangeFields, change); }
Json to_json(const DiffSummary& summary) { return encode_fields(kDiffSummaryFields, summary); }

Json to_json(const ExportArchive& archive) { return encode_fields(kExportArchiveFields, archive); }

Json to_json(const WeightsFile& weights) { return encode_fields(kWeightsFileFields, weights); }
Json to_json(const CheckpointValue& value) {
  return encode_fields(kCheckpointValueFields, value);
}

Json to_json(const OperatorCount& count) { return encode_fields(kOperatorCountFields, count); }

Json to_json(const GraphSignature& signature) {
  return encode_fields(kGraphSignatureFields, signature);
}

Json to_json(const ScanFinding& finding) { return encode_fields(kScanFindingFields, finding); }

Json to_json(const ScanSummary& summary) { return encode_fields(kScanSummaryFields, summary); }

}  // namespace vin::diagnostics
