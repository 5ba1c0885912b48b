#include "vin/diagnostics/json_encoding.h"

namespace vin::diagnostics {
namespace {

std::string dump_scalar(const Json& value) {
  return value.dump(-1, ' ', /*ensure_ascii=*/true, nlohmann::json::error_handler_t::replace);
}

void dump_line_into(const Json& value, std::string& out) {
  if (value.is_object()) {
    out += '{';
    bool first = true;
    for (const auto& [key, item] : value.items()) {
      if (!first) out += ", ";
      first = false;
      out += dump_scalar(Json(key));
      out += ": ";
      dump_line_into(item, out);
    }
    out += '}';
  } else if (value.is_array()) {
    out += '[';
    bool first = true;
    for (const auto& item : value) {
      if (!first) out += ", ";
      first = false;
      dump_line_into(item, out);
    }
    out += ']';
  } else {
    out += dump_scalar(value);
  }
}

}  // namespace

Json to_json(const ModuleMetadata& module) {
  Json j;
  j["path"] = module.path();
  j["module_type"] = module.module_type();
  j["direct_parameters"] = module.direct_parameters();
  j["trainable_parameters"] = module.trainable_parameters();
  j["direct_buffers"] = module.direct_buffers();
  j["training"] = module.training();
  return j;
}

Json to_json(const ModelMetadata& model) {
  Json j;
  j["model_type"] = model.model_type();
  j["total_parameters"] = model.total_parameters();
  j["trainable_parameters"] = model.trainable_parameters();
  Json modules = Json::array();
  for (const auto& m : model.modules()) modules.push_back(to_json(m));
  j["modules"] = std::move(modules);
  return j;
}

Json with_record_key(const char* record_name, const Json& value) {
  Json j;
  j["record"] = record_name;
  for (const auto& [key, item] : value.items()) j[key] = item;
  return j;
}

std::string dump_line(const Json& value) {
  std::string out;
  dump_line_into(value, out);
  return out;
}

std::string dump_pretty(const Json& value) {
  return value.dump(2, ' ', /*ensure_ascii=*/true, nlohmann::json::error_handler_t::replace);
}

}  // namespace vin::diagnostics
