#include "vin/diagnostics/records/bounded_json.h"

#include <optional>
#include <unordered_map>
#include <utility>
#include <vector>

namespace vin::diagnostics {
namespace {

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
  RecordDom(Json& root, std::size_t max_depth) : root_(root), max_depth_(max_depth) {}

  bool null() { return put(nullptr); }
  bool boolean(bool v) { return put(v); }
  bool number_integer(Json::number_integer_t v) { return put(v); }
  bool number_unsigned(Json::number_unsigned_t v) { return put(v); }
  bool number_float(Json::number_float_t v, const std::string& text) {
    const bool integer =
        !text.empty() && text.find_first_not_of("-0123456789") == std::string::npos;
    return integer ? put(big_integer_json(text)) : put(v);
  }
  bool string(std::string& v) { return put(std::move(v)); }
  bool binary(Json::binary_t& v) { return put(Json::binary(std::move(v))); }
  bool start_object(std::size_t) { return open(Json::object()); }
  bool start_array(std::size_t) { return open(Json::array()); }
  bool end_object() { return close(); }
  bool end_array() { return close(); }
  bool key(std::string& name) {
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
  std::vector<Open> open_;
  Json* slot_ = nullptr;
};

}  // namespace

Json parse_bounded_json(const std::string& text, std::size_t max_depth) {
  Json root;
  RecordDom dom(root, max_depth);
  Json::sax_parse(text, &dom);
  return root;
}

}  // namespace vin::diagnostics
