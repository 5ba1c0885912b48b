#include "vin/diagnostics/export/export_schema.h"

#include <cctype>

#include "vin/diagnostics/json/bounded_json.h"
#include "vin/diagnostics/records/error.h"
#include "vin/diagnostics/text/printable.h"

namespace vin::diagnostics::export_detail {

std::string with_quoted_non_finite(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  bool in_string = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      out += c;
      if (c == '\\' && i + 1 < text.size())
        out += text[++i];
      else if (c == '"')
        in_string = false;
      continue;
    }
    if (c == '"') in_string = true;
    bool replaced = false;
    for (std::string_view token : {"-Infinity", "Infinity", "NaN"})
      if (text.compare(i, token.size(), token) == 0) {
        out += '"';
        out += token;
        out += '"';
        i += token.size() - 1;
        replaced = true;
        break;
      }
    if (!replaced) out += c;
  }
  return out;
}

Json parse_json_entry(const std::string& text, const std::string& entry) {
  try {
    return parse_bounded_json(with_quoted_non_finite(text), kMaxProgramDepth);
  } catch (const JsonTooDeep&) {
    throw Malformed{entry + " nests values more than " + std::to_string(kMaxProgramDepth) +
                    " levels deep"};
  } catch (const Json::exception&) {
    throw Malformed{entry + " is not valid JSON"};
  }
}

const Json* field(const Json& object, const char* key, const std::string& where) {
  if (!object.is_object() || !object.contains(key) || object[key].is_null())
    throw Malformed{where + " has no " + key};
  return &object[key];
}

const Json* optional_field(const Json& object, const char* key) {
  if (!object.is_object()) return nullptr;
  const auto it = object.find(key);
  return it == object.end() || it->is_null() ? nullptr : &*it;
}

std::string string_field(const Json& object, const char* key, const std::string& where) {
  const Json& v = *field(object, key, where);
  if (!v.is_string()) throw Malformed{where + "'s " + key + " is not a string"};
  return v.get<std::string>();
}

std::pair<std::string, const Json*> union_variant(const Json& value, const std::string& where) {
  if (!value.is_object() || value.empty()) throw Malformed{where + " is a union with no field"};
  if (value.size() == 1) return {value.begin().key(), &value.begin().value()};
  std::pair<std::string, const Json*> found{"", nullptr};
  for (auto it = value.begin(); it != value.end(); ++it) {
    if (it->is_null()) continue;
    if (found.second) throw Malformed{where + " is a union with two fields"};
    found = {it.key(), &it.value()};
  }
  if (!found.second) throw Malformed{where + " is a union with no field"};
  return found;
}

const Dtype* schema_dtype(const Json& value, const std::string& where) {
  static const std::map<std::int64_t, std::string_view> kNames = {{1, "uint8"},
                                                                  {2, "int8"},
                                                                  {3, "int16"},
                                                                  {4, "int32"},
                                                                  {5, "int64"},
                                                                  {6, "float16"},
                                                                  {7, "float32"},
                                                                  {8, "float64"},
                                                                  {9, "complex32"},
                                                                  {10, "complex64"},
                                                                  {11, "complex128"},
                                                                  {12, "bool"},
                                                                  {13, "bfloat16"},
                                                                  {28, "uint16"},
                                                                  {29, "float8_e4m3fn"},
                                                                  {30, "float8_e5m2"},
                                                                  {31, "float8_e4m3fnuz"},
                                                                  {32, "float8_e5m2fnuz"},
                                                                  {34, "uint32"},
                                                                  {35, "uint64"}};
  if (!value.is_number_integer()) throw Malformed{where + " has a dtype that is not an integer"};
  const auto it = kNames.find(value.get<std::int64_t>());
  const Dtype* dtype = it == kNames.end() ? nullptr : dtype_named(it->second);
  if (!dtype)
    throw Malformed{where + " has dtype " + std::to_string(value.get<std::int64_t>()) +
                    ", which this reader does not know"};
  return dtype;
}

std::int64_t concrete_size(const Json& value, const std::string& where) {
  if (value.is_number_integer()) return value.get<std::int64_t>();
  const auto [variant, v] = union_variant(value, where);
  if (variant == "as_int" && v->is_number_integer()) return v->get<std::int64_t>();
  if (variant == "as_expr") throw Malformed{where + " has a symbolic size"};
  throw Malformed{where + " has a size that is not an integer"};
}

void read_tensor_meta(const Json& meta, const std::string& where, NamedTensor& t) {
  t.dtype = schema_dtype(*field(meta, "dtype", where), where);
  const Json& sizes = *field(meta, "sizes", where);
  if (!sizes.is_array()) throw Malformed{where + "'s sizes are not a list"};
  t.shape.clear();
  t.numel = 1;
  for (const Json& s : sizes) {
    const std::int64_t n = concrete_size(s, where);
    if (n < 0) throw Malformed{where + " has a negative size"};
    t.shape.push_back(n);
    if (__builtin_mul_overflow(t.numel, n, &t.numel))
      throw Malformed{where + "'s sizes overflow 64 bits"};
  }
  std::int64_t bytes = 0;
  if (__builtin_mul_overflow(t.numel, std::int64_t{t.dtype->element_size}, &bytes))
    throw Malformed{where + "'s sizes overflow 64 bits"};
  t.strides.clear();
  if (const Json* strides = optional_field(meta, "strides"); strides && strides->is_array()) {
    if (strides->size() != t.shape.size())
      throw Malformed{where + " has " + std::to_string(strides->size()) + " strides for " +
                      std::to_string(t.shape.size()) + " sizes"};
    for (const Json& s : *strides) {
      const std::int64_t n = concrete_size(s, where);
      if (n < 0) throw Malformed{where + " has a negative stride"};
      t.strides.push_back(n);
    }
  }
  t.storage_offset = 0;
  if (const Json* offset = optional_field(meta, "storage_offset")) {
    t.storage_offset = concrete_size(*offset, where);
    if (t.storage_offset < 0) throw Malformed{where + " has a negative storage offset"};
  }
  if (const Json* grad = optional_field(meta, "requires_grad"); grad && grad->is_boolean())
    t.requires_grad = grad->get<bool>();
  if (const Json* device = optional_field(meta, "device")) {
    const Json* type = optional_field(*device, "type");
    if (type && type->is_string()) t.device = type->get<std::string>();
    if (const Json* index = optional_field(*device, "index"); index && index->is_number_integer())
      t.device += ":" + std::to_string(index->get<std::int64_t>());
  }
}

const Json* graph_tensor_meta(const Json& graph, const std::string& name,
                              const std::string& entry) {
  const Json* values = optional_field(graph, "tensor_values");
  const Json* meta = values ? optional_field(*values, name.c_str()) : nullptr;
  if (meta && meta->is_object() && meta->contains("meta") && !meta->contains("dtype"))
    meta = &meta->at("meta");
  if (!meta) throw Malformed{entry + " has no TensorMeta for " + name};
  return meta;
}

std::string leaf_name(const std::string& name) { return name.substr(name.rfind('.') + 1); }

std::string parent_path(const std::string& name) {
  const std::size_t dot = name.rfind('.');
  return dot == std::string::npos ? "" : name.substr(0, dot);
}

std::string placeholder_name(std::string_view prefix, const std::string& name) {
  std::string out(prefix);
  for (const char c : name)
    out += std::isalnum(static_cast<unsigned char>(c)) || c == '_' ? c : '_';
  return out;
}

Json dimension_json(const Json& size, const std::string& where) {
  if (size.is_number_integer()) return size;
  const auto [variant, v] = union_variant(size, where);
  if (variant == "as_int" && v->is_number_integer()) return *v;
  if (variant == "as_expr") {
    const Json* expr = v->is_string() ? v : optional_field(*v, "expr_str");
    if (expr && expr->is_string()) return SympyText::of(expr->get<std::string>());
  }
  throw Malformed{where + " has a size that is neither an integer nor an expression"};
}

}  // namespace vin::diagnostics::export_detail
