#include "vin/diagnostics/json/json_encoding.h"

#include "vin/diagnostics/json/model_document.h"

#include <algorithm>

#include <charconv>
#include <cmath>
#include <cstdlib>

#include "vin/diagnostics/text/utf8.h"

namespace vin::diagnostics {
namespace {

// Appends `text` as a JSON string to `out`, as Python's json.dumps writes a str: ASCII, `\"`,
// `\\`, `\n`, `\r`, `\t`, `\b`, `\f`, other control characters (DEL too) and non-ASCII as `\uXXXX`
// (surrogate pairs past U+FFFF). A byte that is not part of valid UTF-8 (a file name's) is
// written as Python's os.fsdecode holds it, the lone surrogate U+DC80-U+DCFF (surrogateescape),
// so that names differing in such bytes stay different; bounded_json reads it back as the byte.
void dump_string_into(const std::string& text, std::string& out) {
  static const char* hex = "0123456789abcdef";
  const auto escape = [&](char32_t unit) {
    out += "\\u";
    for (int shift = 12; shift >= 0; shift -= 4) out += hex[(unit >> shift) & 0xF];
  };
  out += '"';
  for (std::size_t i = 0; i < text.size();) {
    // most of a large model's records (paths, type names) is plain ASCII, appended by the run
    std::size_t plain = i;
    const auto is_plain = [](char c) {
      const auto byte = static_cast<unsigned char>(c);
      return byte >= 0x20 && byte < 0x7F && c != '"' && c != '\\';  // as ensure_ascii: DEL too
    };
    while (plain < text.size() && is_plain(text[plain])) ++plain;
    out.append(text, i, plain - i);
    if ((i = plain) == text.size()) break;
    const unsigned char c = static_cast<unsigned char>(text[i]);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
      ++i;
      continue;
    }
    switch (c) {
      case '\n':
        out += "\\n";
        ++i;
        continue;
      case '\r':
        out += "\\r";
        ++i;
        continue;
      case '\t':
        out += "\\t";
        ++i;
        continue;
      case '\b':
        out += "\\b";
        ++i;
        continue;
      case '\f':
        out += "\\f";
        ++i;
        continue;
      default:
        break;
    }
    const std::size_t length = c < 0x80 ? 1 : utf8_sequence_length(text, i);
    if (length == 0) {
      escape(0xDC00 + c);
      ++i;
      continue;
    }
    const char32_t point = utf8_code_point(text, i, length);
    if (point > 0xFFFF) {
      escape(0xD800 + ((point - 0x10000) >> 10));
      escape(0xDC00 + ((point - 0x10000) & 0x3FF));
    } else {
      escape(point);
    }
    i += length;
  }
  out += '"';
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
  } else if (is_big_integer(value)) {
    out += big_integer_digits(value);
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

Json to_json(const ModelMetadata& model) {
  Json j = header_json(model);
  for (std::size_t i = 0; i < kModelDocumentOrderCount; ++i) {
    const ModelPart part = kModelDocumentOrder[i];
    if (auto value = part_document(model, part)) j[model_part(part).json_key] = std::move(*value);
  }
  return j;
}

Json flops_json(FlopCount count) {
  if (fits_int64(count)) return Json(static_cast<std::int64_t>(count));
  if (flops_overflowed(count)) return Json(nullptr);
  return big_integer_json(flop_digits(count));
}

Json macs_json(FlopCount flops) {
  return flops_overflowed(flops) ? Json(nullptr) : flops_json(macs_of(flops));
}

Json to_json(const SampleValue& value) {
  return std::visit([](auto v) { return Json(v); }, value);
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

Json to_json(const ModelStructureSpec& spec) {
  Json j = header_json(spec);
  Json fields = Json::array();
  for (const auto& f : spec.fields()) fields.push_back(to_json(f));
  j["fields"] = std::move(fields);
  return j;
}

bool same_json(const Json& a, const Json& b) {
  // the common cases without printing (diff compares millions of fields); the rest by their
  // text: 1 and 1.0 differ, NaN equals NaN, integers of any size by their digits
  if (a.type() == b.type()) {
    switch (a.type()) {
      case Json::value_t::string:
        return a.get_ref<const std::string&>() == b.get_ref<const std::string&>();
      case Json::value_t::boolean:
        return a.get<bool>() == b.get<bool>();
      case Json::value_t::null:
        return true;
      case Json::value_t::number_integer:
        return a.get<std::int64_t>() == b.get<std::int64_t>();
      case Json::value_t::number_unsigned:
        return a.get<std::uint64_t>() == b.get<std::uint64_t>();
      default:
        break;
    }
  }
  return dump_line(a) == dump_line(b);
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
