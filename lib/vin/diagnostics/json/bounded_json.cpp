#include "vin/diagnostics/json/bounded_json.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
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
  // `\udc`, `\uDC`, `\uDc`, `\udC`: a text is read alike whatever the case of its escapes
  bool any = false;
  for (std::size_t at = text.find("\\u"); at != std::string::npos && !any;
       at = text.find("\\u", at + 1))
    any = at + 3 < text.size() && (text[at + 2] == 'd' || text[at + 2] == 'D') &&
          (text[at + 3] == 'c' || text[at + 3] == 'C');
  if (!any) return std::nullopt;
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


// The checks parse_bounded_json's parser (nlohmann's lexer and parser, after
// with_escaped_bytes_as_private_use) makes, made over the bytes in place. Each value is checked
// where nlohmann meets it: a container's depth at its opening bracket, a scalar's once the
// scalar has been read (RecordDom::place).
class JsonScanner {
 public:
  JsonScanner(std::string_view text, std::size_t max_depth)
      : p_(reinterpret_cast<const unsigned char*>(text.data())),
        end_(p_ + text.size()),
        max_depth_(max_depth) {}

  JsonScan scan(void* context, void (*member)(void*, std::string_view, std::string_view)) {
    try {
      // nlohmann's lexer skips a UTF-8 byte-order mark, and refuses a text starting with a
      // piece of one
      if (p_ < end_ && *p_ == 0xEF) {
        if (end_ - p_ < 3 || p_[1] != 0xBB || p_[2] != 0xBF) return JsonScan::not_json;
        p_ += 3;
      }
      skip_space();
      JsonScan result = JsonScan::not_object;
      if (p_ < end_ && *p_ == '{') {
        object(0, context, member);
        result = JsonScan::object;
      } else {
        value(0);
      }
      skip_space();
      // a NUL byte ends the input for nlohmann's lexer: what follows it is not read
      if (p_ != end_ && *p_ != '\0') return JsonScan::not_json;
      return result;
    } catch (const Invalid&) {
      return JsonScan::not_json;
    } catch (const JsonTooDeep&) {
      return JsonScan::too_deep;
    }
  }

 private:
  struct Invalid {};

  static bool is_space(unsigned char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }
  static bool is_digit(unsigned char c) { return c >= '0' && c <= '9'; }
  void skip_space() {
    while (p_ < end_ && is_space(*p_)) ++p_;
  }
  unsigned char peek() const {
    if (p_ == end_) throw Invalid();
    return *p_;
  }
  void expect(unsigned char c) {
    if (peek() != c) throw Invalid();
    ++p_;
  }
  // RecordDom::place: a value inside more than max_depth containers
  void place(std::size_t depth) const {
    if (depth > max_depth_) throw JsonTooDeep();
  }

  std::string_view since(const unsigned char* start) const {
    return {reinterpret_cast<const char*>(start), static_cast<std::size_t>(p_ - start)};
  }

  void value(std::size_t depth) {
    switch (peek()) {
      case '{':
        object(depth, nullptr, nullptr);
        return;
      case '[':
        array(depth);
        return;
      case '"':
        string();
        break;
      case 't':
        literal("true");
        break;
      case 'f':
        literal("false");
        break;
      case 'n':
        literal("null");
        break;
      default:
        number();
        break;
    }
    place(depth);
  }

  void object(std::size_t depth, void* context,
              void (*member)(void*, std::string_view, std::string_view)) {
    place(depth);
    ++p_;  // '{'
    skip_space();
    if (peek() == '}') {
      ++p_;
      return;
    }
    for (;;) {
      skip_space();
      const unsigned char* key_start = p_;
      if (peek() != '"') throw Invalid();
      string();
      const std::string_view key = since(key_start);
      skip_space();
      expect(':');
      skip_space();
      const unsigned char* value_start = p_;
      value(depth + 1);
      if (member) member(context, key, since(value_start));
      skip_space();
      if (peek() == ',') {
        ++p_;
        continue;
      }
      expect('}');
      return;
    }
  }

  void array(std::size_t depth) {
    place(depth);
    ++p_;  // '['
    skip_space();
    if (peek() == ']') {
      ++p_;
      return;
    }
    for (;;) {
      skip_space();
      value(depth + 1);
      skip_space();
      if (peek() == ',') {
        ++p_;
        continue;
      }
      expect(']');
      return;
    }
  }

  void literal(const char* word) {
    for (const char* w = word; *w; ++w) expect(static_cast<unsigned char>(*w));
  }

  // The number grammar of RFC 8259; nlohmann refuses a number that reads as an infinite double
  // (an integer past 64 bits is read as a double first: past about 309 digits it is infinite).
  void number() {
    const unsigned char* start = p_;
    if (peek() == '-') ++p_;
    std::size_t digits = 0;  // before the point
    if (peek() == '0') {
      ++p_;
      digits = 1;
    } else if (is_digit(peek())) {
      while (p_ < end_ && is_digit(*p_)) ++p_, ++digits;
    } else {
      throw Invalid();
    }
    bool integer = true;
    if (p_ < end_ && *p_ == '.') {
      integer = false;
      ++p_;
      if (!is_digit(peek())) throw Invalid();
      while (p_ < end_ && is_digit(*p_)) ++p_;
    }
    long exponent = 0;
    if (p_ < end_ && (*p_ == 'e' || *p_ == 'E')) {
      integer = false;
      ++p_;
      bool negative = false;
      if (peek() == '+' || peek() == '-') negative = *p_++ == '-';
      if (!is_digit(peek())) throw Invalid();
      while (p_ < end_ && is_digit(*p_)) {
        if (exponent < 100000) exponent = exponent * 10 + (*p_ - '0');
        ++p_;
      }
      if (negative) exponent = -exponent;
    }
    // within 64 bits, or a double of fewer than 300 digits before its point: finite for sure
    if ((integer && digits <= 19) || static_cast<long>(digits) + exponent < 300) return;
    const std::string token(since(start));
    if (!std::isfinite(std::strtod(token.c_str(), nullptr))) throw Invalid();
  }

  unsigned hex4() {
    unsigned unit = 0;
    for (int k = 0; k < 4; ++k) {
      const unsigned char c = peek();
      ++p_;
      unit <<= 4;
      if (c >= '0' && c <= '9')
        unit |= c - '0';
      else if (c >= 'a' && c <= 'f')
        unit |= c - 'a' + 10;
      else if (c >= 'A' && c <= 'F')
        unit |= c - 'A' + 10;
      else
        throw Invalid();
    }
    return unit;
  }

  // A byte in `low`..`high`, else not JSON (UTF-8's continuation bytes as nlohmann checks them).
  void continuation(unsigned char low = 0x80, unsigned char high = 0xBF) {
    const unsigned char c = peek();
    if (c < low || c > high) throw Invalid();
    ++p_;
  }

  void string() {
    ++p_;  // '"'
    for (;;) {
      while (p_ < end_ && *p_ >= 0x20 && *p_ < 0x80 && *p_ != '"' && *p_ != '\\') ++p_;
      const unsigned char c = peek();
      ++p_;
      if (c == '"') return;
      if (c < 0x20) throw Invalid();
      if (c == '\\') {
        escape();
        continue;
      }
      // UTF-8, well-formed as RFC 3629's table (nlohmann's lexer)
      if (c >= 0xC2 && c <= 0xDF) {
        continuation();
      } else if (c == 0xE0) {
        continuation(0xA0), continuation();
      } else if ((c >= 0xE1 && c <= 0xEC) || c == 0xEE || c == 0xEF) {
        continuation(), continuation();
      } else if (c == 0xED) {
        continuation(0x80, 0x9F), continuation();
      } else if (c == 0xF0) {
        continuation(0x90), continuation(), continuation();
      } else if (c >= 0xF1 && c <= 0xF3) {
        continuation(), continuation(), continuation();
      } else if (c == 0xF4) {
        continuation(0x80, 0x8F), continuation(), continuation();
      } else {
        throw Invalid();
      }
    }
  }

  void escape() {
    const unsigned char c = peek();
    ++p_;
    switch (c) {
      case '"':
      case '\\':
      case '/':
      case 'b':
      case 'f':
      case 'n':
      case 'r':
      case 't':
        return;
      case 'u':
        break;
      default:
        throw Invalid();
    }
    const unsigned unit = hex4();
    if (unit >= 0xD800 && unit <= 0xDBFF) {
      // a pair, or nothing nlohmann reads
      if (end_ - p_ < 6 || p_[0] != '\\' || p_[1] != 'u') throw Invalid();
      p_ += 2;
      const unsigned low = hex4();
      if (low < 0xDC00 || low > 0xDFFF) throw Invalid();
    } else if (unit >= 0xDC00 && unit <= 0xDFFF) {
      // alone, only surrogateescape's bytes (with_escaped_bytes_as_private_use)
      if (unit < 0xDC80 || unit > 0xDCFF) throw Invalid();
    }
  }

  const unsigned char* p_;
  const unsigned char* const end_;
  const std::size_t max_depth_;
};

}  // namespace

Json parse_bounded_json(const std::string& text, std::size_t max_depth) {
  Json root;
  const std::optional<std::string> escaped = with_escaped_bytes_as_private_use(text);
  RecordDom dom(root, max_depth, escaped.has_value());
  Json::sax_parse(escaped ? *escaped : text, &dom);
  return root;
}

}  // namespace vin::diagnostics

namespace vin::diagnostics {

JsonScan scan_json_object(std::string_view text, std::size_t max_depth, void* context,
                          void (*member)(void*, std::string_view, std::string_view)) {
  return JsonScanner(text, max_depth).scan(context, member);
}

std::string json_string_value(std::string_view quoted) {
  if (quoted.size() >= 2 && quoted.find('\\') == std::string_view::npos)
    return std::string(quoted.substr(1, quoted.size() - 2));
  return parse_bounded_json(std::string(quoted), 1).get<std::string>();
}

bool is_plain_json_string(std::string_view text) {
  if (text.size() < 2 || text.front() != '"') return false;
  for (std::size_t i = 1; i + 1 < text.size(); ++i) {
    const auto byte = static_cast<unsigned char>(text[i]);
    if (byte < 0x20 || byte >= 0x7F || byte == '"' || byte == '\\') return false;
  }
  return true;
}

}  // namespace vin::diagnostics
