#include "vin/diagnostics/records/json_encoding.h"

#include <algorithm>

#include <charconv>
#include <cmath>
#include <cstdlib>

namespace vin::diagnostics {
namespace {

// Appends `text` as a JSON string to `out`.
void dump_string_into(const std::string& text, std::string& out) {
  // the common case, printable ASCII with nothing to escape, without building a json value
  // (module paths and type names: most of a large model's records)
  const bool plain = std::all_of(text.begin(), text.end(), [](char c) {
    return c >= 0x20 && c < 0x7f && c != '"' && c != '\\';
  });
  if (plain) {
    out += '"';
    out += text;
    out += '"';
    return;
  }
  out += Json(text).dump(-1, ' ', /*ensure_ascii=*/true, nlohmann::json::error_handler_t::replace);
}

// Python's repr(float): the shortest digits that read back to the same double, in fixed notation
// when the decimal exponent is in [-4, 16), else as d.ddde+XX.
std::string python_float_repr(double value) {
  if (std::isnan(value)) return "NaN";
  if (std::isinf(value)) return value > 0 ? "Infinity" : "-Infinity";
  if (value == 0) return std::signbit(value) ? "-0.0" : "0.0";
  char buf[64];
  const auto result = std::to_chars(buf, buf + sizeof buf, value, std::chars_format::scientific);
  const std::string sci(buf, result.ptr);  // e.g. "-1.2345e-05"
  const std::size_t e = sci.find('e');
  const bool negative = sci[0] == '-';
  std::string digits;
  for (std::size_t i = negative ? 1 : 0; i < e; ++i)
    if (sci[i] != '.') digits.push_back(sci[i]);
  const int exponent = std::atoi(sci.c_str() + e + 1);  // value = d.ddd * 10^exponent
  const int decpt = exponent + 1;                       // value = 0.dddd * 10^decpt
  std::string out = negative ? "-" : "";
  if (decpt > -4 && decpt <= 16) {
    if (decpt <= 0) {
      out += "0." + std::string(static_cast<std::size_t>(-decpt), '0') + digits;
    } else if (static_cast<std::size_t>(decpt) >= digits.size()) {
      out += digits + std::string(static_cast<std::size_t>(decpt) - digits.size(), '0') + ".0";
    } else {
      out += digits.substr(0, static_cast<std::size_t>(decpt)) + "." +
             digits.substr(static_cast<std::size_t>(decpt));
    }
  } else {
    out += digits.substr(0, 1);
    if (digits.size() > 1) out += "." + digits.substr(1);
    const int shown = decpt - 1;
    out += shown < 0 ? "e-" : "e+";
    const int magnitude = shown < 0 ? -shown : shown;
    if (magnitude < 10) out += "0";
    out += std::to_string(magnitude);
  }
  return out;
}

// Appends a scalar `value` to `out`.
void dump_scalar_into(const Json& value, std::string& out) {
  if (value.is_number_float()) {
    const double d = value.get<double>();
    // non-finite floats are strings (docs/records.md; JSON has no NaN)
    if (!std::isfinite(d))
      out += "\"" + python_float_repr(d) + "\"";
    else
      out += python_float_repr(d);
  } else if (value.is_string()) {
    dump_string_into(value.get_ref<const std::string&>(), out);
  } else if (value.is_number_unsigned()) {  // the common scalars without nlohmann's serializer
    out += std::to_string(value.get<std::uint64_t>());
  } else if (value.is_number_integer()) {
    out += std::to_string(value.get<std::int64_t>());
  } else if (value.is_boolean()) {
    out += value.get<bool>() ? "true" : "false";
  } else if (value.is_null()) {
    out += "null";
  } else {
    out += value.dump();
  }
}

// json.dumps(value) when indent < 0, json.dumps(value, indent=indent) otherwise.
void dump_into(const Json& value, int indent, int level, std::string& out) {
  const bool pretty = indent >= 0;
  const auto newline = [&](int at_level) {
    out += '\n';
    out.append(static_cast<std::size_t>(indent * at_level), ' ');
  };
  if (value.is_object() || value.is_array()) {
    const bool object = value.is_object();
    if (value.empty()) {
      out += object ? "{}" : "[]";
      return;
    }
    out += object ? '{' : '[';
    bool first = true;
    for (auto it = value.begin(); it != value.end(); ++it) {
      if (!first) out += pretty ? "," : ", ";
      first = false;
      if (pretty) newline(level + 1);
      if (object) {
        dump_string_into(it.key(), out);
        out += ": ";
      }
      dump_into(*it, indent, level + 1, out);
    }
    if (pretty) newline(level);
    out += object ? '}' : ']';
    return;
  }
  dump_scalar_into(value, out);
}

}  // namespace

std::string python_float_text(double value) { return python_float_repr(value); }

Json to_json(const ModuleMetadata& module, bool with_tensors) {
  Json j;
  j["path"] = module.path();
  j["module_type"] = module.module_type();
  j["direct_parameters"] = module.direct_parameters();
  j["trainable_parameters"] = module.trainable_parameters();
  j["direct_buffers"] = module.direct_buffers();
  j["training"] = module.training();
  const ModuleDetails& details = module.details();
  if (details.attributes) j["attributes"] = *details.attributes;
  if (details.tensors && with_tensors) {
    Json tensors = Json::array();
    for (const auto& t : *details.tensors) tensors.push_back(to_json(t));
    j["tensors"] = std::move(tensors);
  }
  return j;
}

Json to_json(const TensorMetadata& tensor) {
  Json j;
  j["name"] = tensor.name;
  j["kind"] = tensor.kind;
  j["shape"] = tensor.shape;
  j["dtype"] = tensor.dtype;
  j["device"] = tensor.device;
  j["requires_grad"] = tensor.requires_grad;
  j["numel"] = tensor.numel;
  j["nbytes"] = tensor.nbytes;
  j["storage_crc32"] = tensor.storage_crc32 ? Json(*tensor.storage_crc32) : Json(nullptr);
  return j;
}

Json to_json(const MethodSignature& method) {
  Json j;
  j["name"] = method.name;
  Json arguments = Json::array();
  for (const auto& a : method.arguments)
    arguments.push_back(Json::object({{"name", a.name},
                                      {"type", a.type},
                                      {"has_default", a.has_default},
                                      {"default", a.default_value}}));
  j["arguments"] = std::move(arguments);
  j["returns"] = method.returns;
  return j;
}

Json header_json(const ModelMetadata& model) {
  Json j;
  j["model_type"] = model.model_type();
  j["total_parameters"] = model.total_parameters();
  j["trainable_parameters"] = model.trainable_parameters();
  const ModelDetails& details = model.details();
  if (details.parameter_bytes) j["parameter_bytes"] = *details.parameter_bytes;
  if (details.buffer_bytes) j["buffer_bytes"] = *details.buffer_bytes;
  return j;
}

Json to_json(const ModelMetadata& model) {
  Json j = header_json(model);
  if (const auto& methods = model.details().methods) {
    Json list = Json::array();
    for (const auto& m : *methods) list.push_back(to_json(m));
    j["methods"] = std::move(list);
  }
  Json modules = Json::array();
  for (const auto& m : model.modules()) modules.push_back(to_json(m));
  j["modules"] = std::move(modules);
  return j;
}

Json to_json(const SampleValue& value) {
  return std::visit([](auto v) { return Json(v); }, value);
}

Json to_json(const TensorSnapshot& s) {
  Json j;
  j["module_path"] = s.module_path();
  j["call_index"] = s.call_index();
  j["direction"] = to_string(s.direction());
  j["tensor_path"] = s.tensor_path();
  j["shape"] = s.shape();
  j["dtype"] = s.dtype();
  j["device"] = s.device();
  j["numel"] = s.numel();
  j["sampled_bytes"] = s.sampled_bytes();
  Json values = Json::array();
  for (const auto& v : s.values()) values.push_back(to_json(v));
  j["values"] = std::move(values);
  j["sample_omission_reason"] =
      s.sample_omission_reason() ? Json(*s.sample_omission_reason()) : Json(nullptr);
  if (s.stats()) {
    if (s.stats()->entries.empty()) {
      j["stats"] = nullptr;
    } else {
      Json stats;
      for (const auto& [name, value] : s.stats()->entries)
        stats[name] = std::visit([](auto v) { return Json(v); }, value);
      j["stats"] = std::move(stats);
    }
  }
  return j;
}

Json to_json(const ModuleProfile& module) {
  Json j;
  j["module_path"] = module.module_path;
  j["module_type"] = module.module_type;
  j["calls"] = module.calls;
  j["parameters"] = module.parameters;
  j["input_shapes"] = module.input_shapes;
  j["output_shapes"] = module.output_shapes;
  j["flops"] = module.flops;
  j["self_flops"] = module.self_flops;
  j["time_ms"] = module.time_ms;
  j["self_time_ms"] = module.self_time_ms;
  j["allocated_bytes"] = module.allocated_bytes;
  j["peak_bytes"] = module.peak_bytes;
  return j;
}

Json to_json(const OperatorProfile& op) {
  Json j;
  j["operator"] = op.name;
  j["calls"] = op.calls;
  j["flops"] = op.flops;
  j["time_ms"] = op.time_ms;
  return j;
}

Json to_json(const ProfileSummary& summary) {
  Json j;
  j["device"] = summary.device;
  j["warmup"] = summary.warmup;
  j["runs"] = summary.runs;
  Json latency;
  latency["min"] = summary.latency_ms.min;
  latency["median"] = summary.latency_ms.median;
  latency["mean"] = summary.latency_ms.mean;
  latency["p90"] = summary.latency_ms.p90;
  latency["max"] = summary.latency_ms.max;
  j["latency_ms"] = std::move(latency);
  j["throughput"] = summary.throughput;
  j["flops"] = summary.flops;
  j["instrumented_ms"] = summary.instrumented_ms;
  j["peak_bytes"] = summary.peak_bytes;
  j["parameter_bytes"] = summary.parameter_bytes;
  j["buffer_bytes"] = summary.buffer_bytes;
  j["modules"] = summary.modules;
  j["operators"] = summary.operators;
  return j;
}

Json to_json(const CaptureSummary& summary) {
  Json j;
  j["snapshots"] = summary.snapshots;
  j["sampled_bytes"] = summary.sampled_bytes;
  j["stopped_by"] = summary.stopped_by ? Json(*summary.stopped_by) : Json(nullptr);
  if (summary.with_stats) {
    if (const auto& at = summary.first_nonfinite) {
      j["first_nonfinite"] = Json::object({{"module_path", at->module_path},
                                           {"call_index", at->call_index},
                                           {"direction", to_string(at->direction)},
                                           {"tensor_path", at->tensor_path},
                                           {"recorded", at->recorded}});
    } else {
      j["first_nonfinite"] = nullptr;
    }
    j["checked_tensors"] = summary.checked_tensors;
    j["nonfinite_tensors"] = summary.nonfinite_tensors;
  }
  if (const auto& saved = summary.saved) {
    j["saved_tensors"] = saved->tensors;
    j["saved_bytes"] = saved->bytes;
    j["unsaved_tensors"] = saved->unsaved;
  }
  return j;
}

namespace {

void put_key(Json& j, const TensorKey& key) {
  j["module_path"] = key.module_path;
  j["call_index"] = key.call_index;
  j["direction"] = to_string(key.direction);
  j["tensor_path"] = key.tensor_path;
}

template <class T>
Json optional_json(const std::optional<T>& value) {
  return value ? Json(*value) : Json(nullptr);
}

Json optional_float(const std::optional<double>& value) {
  return value ? json_float(*value) : Json(nullptr);
}

}  // namespace

Json to_json(const TensorComparison& c) {
  Json j;
  put_key(j, c.key);
  j["shape_a"] = optional_json(c.shape_a);
  j["shape_b"] = optional_json(c.shape_b);
  j["dtype_a"] = optional_json(c.dtype_a);
  j["dtype_b"] = optional_json(c.dtype_b);
  j["numel"] = c.numel;
  j["max_abs_error"] = optional_float(c.max_abs_error);
  j["max_rel_error"] = optional_float(c.max_rel_error);
  j["mismatches"] = optional_json(c.mismatches);
  j["atol"] = json_float(c.atol);
  j["rtol"] = json_float(c.rtol);
  j["within_tolerance"] = c.within_tolerance;
  j["only_in"] = optional_json(c.only_in);
  j["statistics_only"] = c.statistics_only;
  return j;
}

Json to_json(const ComparisonSummary& s) {
  Json j;
  j["pairs"] = s.pairs;
  j["within"] = s.within;
  j["beyond"] = s.beyond;
  j["only_in_a"] = s.only_in_a;
  j["only_in_b"] = s.only_in_b;
  if (s.first_divergence) {
    Json at;
    put_key(at, *s.first_divergence);
    j["first_divergence"] = std::move(at);
  } else {
    j["first_divergence"] = nullptr;
  }
  j["atol"] = optional_float(s.atol);
  j["rtol"] = optional_float(s.rtol);
  j["statistics_only"] = s.statistics_only;
  return j;
}

Json to_json(const ConfigValue& value) {
  struct Visitor {
    Json operator()(std::nullptr_t) const { return Json(nullptr); }
    Json operator()(bool v) const { return Json(v); }
    Json operator()(std::int64_t v) const { return Json(v); }
    Json operator()(double v) const { return Json(v); }
    Json operator()(const std::string& v) const { return Json(v); }
    Json operator()(const TypeMarker& v) const { return Json::object({{"type_marker", v.type}}); }
  };
  return std::visit(Visitor{}, value);
}

Json to_json(const ConfigFieldSpec& field) {
  Json j;
  j["path"] = field.path();
  j["declared_type"] = field.declared_type() ? Json(*field.declared_type()) : Json(nullptr);
  j["configured_type"] = field.configured_type();
  j["value"] = to_json(field.value());
  return j;
}

Json header_json(const ModelStructureSpec& spec) {
  Json j;
  j["config_type"] = spec.config_type() ? Json(*spec.config_type()) : Json(nullptr);
  j["target_type"] = spec.target_type() ? Json(*spec.target_type()) : Json(nullptr);
  return j;
}

Json to_json(const ModelStructureSpec& spec) {
  Json j = header_json(spec);
  Json fields = Json::array();
  for (const auto& f : spec.fields()) fields.push_back(to_json(f));
  j["fields"] = std::move(fields);
  return j;
}

std::string dump_line(const Json& value) {
  std::string out;
  dump_into(value, -1, 0, out);
  return out;
}

std::string dump_record_line(const char* record_name, const Json& object) {
  // as dump_line of the object with "record" prepended, without copying the object into one
  std::string out = "{\"record\": ";
  dump_string_into(record_name, out);
  for (auto it = object.begin(); it != object.end(); ++it) {
    out += ", ";
    dump_string_into(it.key(), out);
    out += ": ";
    dump_into(*it, -1, 1, out);
  }
  out += '}';
  return out;
}

std::string dump_pretty(const Json& value) {
  std::string out;
  dump_into(value, 2, 0, out);
  return out;
}

}  // namespace vin::diagnostics
