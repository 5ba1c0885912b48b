#include "vin/diagnostics/records/bounded_json.h"

#include <algorithm>
#include <optional>
#include <unordered_map>
#include <utility>
#include <vector>

namespace vin::diagnostics {
namespace {

// The bytes with_escaped_bytes_as_private_use gave to plane 16, back as the bytes they were.
void restore_escaped_bytes(std::string& text) {
  // U+10FF80 + (byte - 0x80) is F4 8F BE 80..BF for the bytes 80..BF, F4 8F BF 80..BF for C0..FF
  std::size_t out = 0;
  for (std::size_t i = 0; i < text.size();) {
    if (static_cast<unsigned char>(text[i]) == 0xF4 && i + 3 < text.size() &&
        static_cast<unsigned char>(text[i + 1]) == 0x8F &&
        (static_cast<unsigned char>(text[i + 2]) & 0xFE) == 0xBE) {
      const unsigned char last = static_cast<unsigned char>(text[i + 3]);
      text[out++] = static_cast<char>(text[i + 2] == '\xbe' ? last : last + 0x40);
      i += 4;
    } else {
      text[out++] = text[i++];
    }
  }
  text.resize(out);
}

// The DOM Json::parse builds, built from the parser's events (nlohmann's parser itself keeps its
// state on the heap) with three differences:
//  - an object's members are appended without ordered_json's search for the key (a scan of the
//    members so far: a 300,000-key object took minutes); a repeated key still replaces the value
//    where it first was, found through an index made once an object has many members;
//  - a value inside more than `max_depth` containers throws JsonTooDeep as it is met, before
//    anything deeper is built (nlohmann's copies, comparisons and dumps recurse);
//  - an integer too large for 64 bits, which nlohmann reads as a double (18446744073709551617
//    and 18446744073709551616 would be one number), is kept as its digits (big_integer_json), so
//    that values compare exactly, however large, and never equal a string of the same digits.
class RecordDom {
 public:
  RecordDom(Json& root, std::size_t max_depth, bool restore_bytes)
      : root_(root), max_depth_(max_depth), restore_bytes_(restore_bytes) {}

  bool null() { return put(nullptr); }
  bool boolean(bool v) { return put(v); }
  bool number_integer(Json::number_integer_t v) { return put(v); }
  bool number_unsigned(Json::number_unsigned_t v) { return put(v); }
  bool number_float(Json::number_float_t v, const std::string& text) {
    const bool integer =
        !text.empty() && text.find_first_not_of("-0123456789") == std::string::npos;
    return integer ? put(big_integer_json(text)) : put(v);
  }
  bool string(std::string& v) {
    if (restore_bytes_) restore_escaped_bytes(v);
    return put(std::move(v));
  }
  bool binary(Json::binary_t& v) { return put(Json::binary(std::move(v))); }
  bool start_object(std::size_t) { return open(Json::object()); }
  bool start_array(std::size_t) { return open(Json::array()); }
  bool end_object() { return close(); }
  bool end_array() { return close(); }
  bool key(std::string& name) {
    if (restore_bytes_) restore_escaped_bytes(name);
    Open& top = open_.back();
    // ordered_json's members as the vector they are (its operator[] takes keys)
    auto& members = static_cast<Json::object_t::Container&>(top.value->get_ref<Json::object_t&>());
    constexpr std::size_t kIndexFrom = 16;  // below it a scan is cheaper than an index
    std::optional<std::size_t> found;
    if (!top.index.empty()) {
      if (const auto it = top.index.find(name); it != top.index.end()) found = it->second;
    } else {
      for (std::size_t i = 0; i < members.size(); ++i)
        if (members[i].first == name) found = i;
    }
    if (found) {
      slot_ = &members[*found].second;
      return true;
    }
    members.emplace_back(name, nullptr);  // no search for the key
    if (!top.index.empty() || members.size() >= kIndexFrom) {
      if (top.index.empty())
        for (std::size_t i = 0; i + 1 < members.size(); ++i) top.index.emplace(members[i].first, i);
      top.index.emplace(name, members.size() - 1);
    }
    slot_ = &members.back().second;
    return true;
  }
  template <class Exception>
  bool parse_error(std::size_t, const std::string&, const Exception& error) {
    throw error;
  }

 private:
  struct Open {
    Json* value;
    std::unordered_map<std::string, std::size_t> index;  // of an object with many members
  };

  // Where the next value goes: the root, the array being read, or the member just named.
  Json* place(Json value) {
    if (open_.size() > max_depth_) throw JsonTooDeep();
    if (open_.empty()) {
      root_ = std::move(value);
      return &root_;
    }
    Json& top = *open_.back().value;
    if (top.is_array()) {
      auto& items = top.get_ref<Json::array_t&>();
      items.push_back(std::move(value));
      return &items.back();
    }
    *slot_ = std::move(value);
    return slot_;
  }
  template <class T>
  bool put(T&& value) {
    place(Json(std::forward<T>(value)));
    return true;
  }
  bool open(Json container) {
    // (the containers open around a value are never appended to while it is read, so the
    // pointers held here stay valid)
    open_.push_back(Open{place(std::move(container)), {}});
    return true;
  }
  bool close() {
    open_.pop_back();
    return true;
  }

  Json& root_;
  const std::size_t max_depth_;
  const bool restore_bytes_;
  std::vector<Open> open_;
  Json* slot_ = nullptr;
};

// A byte that is not UTF-8 is written as the lone surrogate \udc80-\udcff (json_encoding, and
// Python's json.dumps of an os.fsdecode'd name); nlohmann refuses lone surrogates. So before the
// parse each becomes a code point of plane 16's private use, U+10FF80-U+10FFFF, which the DOM
// turns back into the byte (restore_escaped_bytes). nullopt when the text holds none.
std::optional<std::string> with_escaped_bytes_as_private_use(const std::string& text) {
  if (text.find("\\udc") == std::string::npos && text.find("\\uDC") == std::string::npos)
    return std::nullopt;
  const auto hex_at = [&](std::size_t at) -> long {
    if (at + 4 > text.size()) return -1;
    long value = 0;
    for (std::size_t k = at; k < at + 4; ++k) {
      const char c = text[k];
      const int digit = c >= '0' && c <= '9'   ? c - '0'
                        : c >= 'a' && c <= 'f' ? c - 'a' + 10
                        : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                               : -1;
      if (digit < 0) return -1;
      value = value * 16 + digit;
    }
    return value;
  };
  std::string out;
  out.reserve(text.size());
  bool in_string = false, found = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (!in_string || c != '\\') {
      if (c == '"') in_string = !in_string;
      out += c;
      continue;
    }
    // an escape inside a string: `\uXXXX` (a pair of them for a surrogate pair), else two bytes
    const long unit = i + 1 < text.size() && text[i + 1] == 'u' ? hex_at(i + 2) : -1;
    if (unit >= 0xD800 && unit <= 0xDBFF && i + 8 <= text.size() &&
        text.compare(i + 6, 2, "\\u") == 0 && hex_at(i + 8) >= 0xDC00 && hex_at(i + 8) <= 0xDFFF) {
      out.append(text, i, 12);
      i += 11;
    } else if (unit >= 0xDC80 && unit <= 0xDCFF) {
      static const char* hex = "0123456789abcdef";
      const long low = 0xDF80 + (unit - 0xDC80);
      out += "\\udbff\\u";
      for (int shift = 12; shift >= 0; shift -= 4) out += hex[(low >> shift) & 0xF];
      i += 5;
      found = true;
    } else {
      out.append(text, i, std::min<std::size_t>(2, text.size() - i));
      ++i;
    }
  }
  if (!found) return std::nullopt;
  return out;
}

}  // namespace

Json parse_bounded_json(const std::string& text, std::size_t max_depth) {
  Json root;
  const std::optional<std::string> escaped = with_escaped_bytes_as_private_use(text);
  RecordDom dom(root, max_depth, escaped.has_value());
  Json::sax_parse(escaped ? *escaped : text, &dom);
  return root;
}

}  // namespace vin::diagnostics
