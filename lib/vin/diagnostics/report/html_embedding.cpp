#include "vin/diagnostics/report/html_embedding.h"

#include <cstdio>

#include "vin/diagnostics/container/sha256.h"
#include "vin/diagnostics/text/utf8.h"

namespace vin::diagnostics {

std::string report_text(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size();) {
    const std::size_t n = utf8_sequence_length(text, i);
    if (n > 0) {
      out.append(text, i, n);
      i += n;
      continue;
    }
    char escape[5];
    std::snprintf(escape, sizeof escape, "\\x%02x", static_cast<unsigned char>(text[i]));
    out += escape;
    ++i;
  }
  return out;
}

namespace {

std::string escaped_for_script(const std::string& text) {
  std::string out;
  out.reserve(text.size() + text.size() / 16);
  // outside its strings JSON holds none of these: each is inside a string, where the escape
  // reads back as the character
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '<') out += "\\u003c";
    else if (c == '>') out += "\\u003e";
    else if (c == '&') out += "\\u0026";
    else if (c == '\xe2' && i + 2 < text.size() && text[i + 1] == '\x80' &&
             (text[i + 2] == '\xa8' || text[i + 2] == '\xa9')) {
      out += text[i + 2] == '\xa8' ? "\\u2028" : "\\u2029";
      i += 2;
    } else {
      out += c;
    }
  }
  return out;
}

}  // namespace

std::string script_json(const nlohmann::json& data) {
  return escaped_for_script(data.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
}

std::string script_json(const Json& data) {
  return escaped_for_script(data.dump(-1, ' ', false, Json::error_handler_t::replace));
}

std::string csp_hash(std::string_view source) {
  Sha256 hash;
  hash.update(source.data(), source.size());
  const auto digest = hash.digest();
  static const char alphabet[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string base64;
  for (std::size_t i = 0; i < digest.size(); i += 3) {
    const std::size_t left = digest.size() - i;
    const unsigned v = (unsigned{digest[i]} << 16) | (left > 1 ? unsigned{digest[i + 1]} << 8 : 0) |
                       (left > 2 ? unsigned{digest[i + 2]} : 0);
    base64 += alphabet[(v >> 18) & 63];
    base64 += alphabet[(v >> 12) & 63];
    base64 += left > 1 ? alphabet[(v >> 6) & 63] : '=';
    base64 += left > 2 ? alphabet[v & 63] : '=';
  }
  return "'sha256-" + base64 + "'";
}

}  // namespace vin::diagnostics
