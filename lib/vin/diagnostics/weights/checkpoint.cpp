#include "vin/diagnostics/weights/checkpoint.h"

#include <algorithm>
#include <cstring>
#include <optional>
#include <string_view>
#include <unordered_set>
#include <utility>

#include "vin/diagnostics/records/error.h"
#include "vin/diagnostics/records/record_value.h"
#include "vin/diagnostics/text/dtypes.h"

namespace vin::diagnostics {
namespace {

using Kind = PickleValue::Kind;

constexpr std::size_t kMaxVisits = std::size_t{8} << 20;
constexpr std::size_t kMaxKeyBytes = std::size_t{64} << 20;
constexpr std::size_t kMaxValueCharacters = 200;
constexpr std::size_t kMaxValueItems = 200;

bool is_container(const PickleValue& v) {
  return v.kind == Kind::dict || v.kind == Kind::list || v.kind == Kind::tuple;
}

// A list or tuple of plain numbers (an optimizer's parameter indices, betas): one value, not a
// value per item (contract 11.2)
bool is_number_sequence(const PickleValue& v) {
  return (v.kind == Kind::list || v.kind == Kind::tuple) &&
         std::all_of(v.items.begin(), v.items.end(), [](PickleRef item) {
           return item->kind == Kind::integer || item->kind == Kind::floating;
         });
}

// a dict key as a segment of a dotted key, and as state_dict_path writes it
std::string key_text(const PickleValue& key) {
  switch (key.kind) {
    case Kind::string:
      return key.text;
    case Kind::integer:
      return std::to_string(key.integer);
    case Kind::boolean:
      return key.boolean ? "True" : "False";
    case Kind::none:
      return "None";
    case Kind::floating: {
      Json j = json_float(key.floating);
      return j.is_string() ? j.get<std::string>() : j.dump();
    }
    default:
      return "<" + std::string(key.kind == Kind::tuple ? "tuple" : "key") + ">";
  }
}

// `text` cut after `limit` UTF-8 characters
std::string cut_characters(const std::string& text, std::size_t limit) {
  std::size_t characters = 0;
  for (std::size_t i = 0; i < text.size(); ++i)
    if ((static_cast<unsigned char>(text[i]) & 0xC0) != 0x80 && characters++ == limit)
      return text.substr(0, i);
  return text;
}

// Python's bytes of a protocol-2 `_codecs.encode(text, "latin1")`: each character one byte
std::optional<std::string> latin1_bytes(const PickleValue& v) {
  if (v.kind == Kind::bytes) return v.text;
  if (v.kind != Kind::opaque || v.text != "_codecs.encode" || v.items.size() != 2 ||
      v.items[0]->kind != Kind::string)
    return std::nullopt;
  std::string out;
  const std::string& s = v.items[0]->text;
  for (std::size_t i = 0; i < s.size(); ++i) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c < 0x80) {
      out += static_cast<char>(c);
    } else if ((c & 0xE0) == 0xC0 && i + 1 < s.size() && c <= 0xC3) {
      out += static_cast<char>(((c & 0x03) << 6) | (static_cast<unsigned char>(s[++i]) & 0x3F));
    } else {
      return std::nullopt;  // a character past latin-1
    }
  }
  return out;
}

// numpy.float64(0.5) and its kind, as numpy pickles a scalar: scalar(dtype("f8", ...), bytes)
std::optional<CheckpointValue> numpy_scalar(const PickleValue& v) {
  if (v.text != "numpy.core.multiarray.scalar" && v.text != "numpy._core.multiarray.scalar")
    return std::nullopt;
  if (v.items.size() != 2 || v.items[0]->kind != Kind::opaque || v.items[0]->items.empty() ||
      v.items[0]->items[0]->kind != Kind::string)
    return std::nullopt;
  const std::string& code = v.items[0]->items[0]->text;  // "f8", "i8", "b1", ...
  const auto bytes = latin1_bytes(*v.items[1]);
  if (!bytes || code.size() != 2 || code[1] < '1' || code[1] > '8' ||
      bytes->size() != static_cast<std::size_t>(code[1] - '0'))
    return std::nullopt;
  std::uint64_t raw = 0;  // little-endian: numpy writes the machine's order
  for (std::size_t i = bytes->size(); i-- > 0;)
    raw = (raw << 8) | static_cast<unsigned char>((*bytes)[i]);
  const unsigned bits = static_cast<unsigned>(bytes->size()) * 8;
  CheckpointValue out;
  switch (code[0]) {
    case 'f':
      if (bits == 64) {
        double d;
        std::memcpy(&d, &raw, 8);
        out.value = json_float(d);
      } else if (bits == 32) {
        float f;
        const auto r32 = static_cast<std::uint32_t>(raw);
        std::memcpy(&f, &r32, 4);
        out.value = json_float(f);
      } else {
        return std::nullopt;
      }
      out.type = "numpy.float" + std::to_string(bits);
      return out;
    case 'i': {
      const std::int64_t value =
          bits == 64 ? static_cast<std::int64_t>(raw)
                     : static_cast<std::int64_t>(raw << (64 - bits)) >> (64 - bits);
      out.type = "numpy.int" + std::to_string(bits);
      out.value = value;
      return out;
    }
    case 'u':
      out.type = "numpy.uint" + std::to_string(bits);
      out.value = raw;
      return out;
    case 'b':
      if (bits != 8) return std::nullopt;
      out.type = "numpy.bool";
      out.value = raw != 0;
      return out;
    default:
      return std::nullopt;
  }
}

// What a leaf that is not a tensor says of itself: Python's type name and the value of a scalar
CheckpointValue leaf_value(const PickleValue& v) {
  CheckpointValue out;
  out.value = nullptr;
  switch (v.kind) {
    case Kind::none:
      out.type = "NoneType";
      return out;
    case Kind::boolean:
      out.type = "bool";
      out.value = v.boolean;
      return out;
    case Kind::integer:
      out.type = "int";
      out.value = v.integer;
      return out;
    case Kind::floating:
      out.type = "float";
      out.value = json_float(v.floating);
      return out;
    case Kind::string:
      out.type = "str";
      out.value = cut_characters(v.text, kMaxValueCharacters);
      return out;
    case Kind::bytes:
      out.type = "bytes";
      return out;
    case Kind::dict:
      out.type = "dict";
      out.value = Json::object();
      return out;
    case Kind::list:
    case Kind::tuple:  // empty, or of plain numbers: its first items
      out.type = v.kind == Kind::list ? "list" : "tuple";
      out.value = Json::array();
      for (std::size_t i = 0; i < v.items.size() && i < kMaxValueItems; ++i) {
        const PickleValue& item = *v.items[i];
        out.value.push_back(item.kind == Kind::integer ? Json(item.integer)
                                                       : json_float(item.floating));
      }
      return out;
    case Kind::global:  // a class or a dtype, by name
      if (v.text.rfind("torch.", 0) == 0 && dtype_named(std::string_view(v.text).substr(6))) {
        out.type = "torch.dtype";
      } else {
        out.type = "type";
      }
      out.value = cut_characters(v.text, kMaxValueCharacters);
      return out;
    case Kind::object:
      out.type = v.text;
      return out;
    case Kind::storage:
      out.type = "torch.storage";
      return out;
    case Kind::tensor:
      break;  // not a leaf value
    case Kind::opaque:
      if (auto scalar = numpy_scalar(v)) return *scalar;
      if (v.text == "_codecs.encode") {
        out.type = "bytes";
      } else if (v.text == "builtins.int") {
        out.type = "int";  // wider than 64 bits: not read
      } else if (v.text == "copyreg._reconstructor" && !v.items.empty() &&
                 v.items[0]->kind == Kind::global) {
        out.type = v.items[0]->text;  // a Python object: its class
      } else if (v.text == "builtins.set" || v.text == "builtins.frozenset") {
        out.type = v.text.substr(9);
      } else {
        out.type = v.text.empty() ? "object" : v.text;
      }
      return out;
  }
  return out;
}

// nn.Module.get_extra_state's entry in a state dict ("_extra_state", "fc._extra_state"): any
// value, beside the tensors
bool is_extra_state(const PickleValue& key) {
  static constexpr std::string_view kName = "_extra_state";
  const std::string_view k = key.text;
  return key.kind == Kind::string && k.size() >= kName.size() &&
         k.substr(k.size() - kName.size()) == kName &&
         (k.size() == kName.size() || k[k.size() - kName.size() - 1] == '.');
}

class Walk {
 public:
  explicit Walk(const std::string& label) : label_(label) {}

  // every leaf under `v`, `key` its dotted key ("" at the root), `path` its keys as
  // state_dict_path writes them (while only string keys lead to it: else null), `parent` the
  // candidate state dict `v` is a tensor of
  void visit(const PickleValue& v, const std::string& key, const Json& path,
             std::size_t parent = kNone) {
    if (++visits_ > kMaxVisits)
      throw Error(label_ + ": its values, each shared one counted where it is referred to, " +
                  "number more than " + std::to_string(kMaxVisits));
    if (v.kind == Kind::tensor) {
      out_.tensors.push_back({key, "", false, &v});
      parents_.push_back(parent);
      return;
    }
    if (!is_container(v) || v.items.empty() || is_number_sequence(v) || on_path_.count(&v)) {
      CheckpointValue leaf = leaf_value(v);
      leaf.key = key;
      if (on_path_.count(&v)) leaf.value = nullptr;  // a container inside itself
      charge(key.size());
      out_.values.push_back(std::move(leaf));
      return;
    }
    on_path_.insert(&v);
    if (v.kind == Kind::dict) {
      const std::size_t candidate = consider_state_dict(v, key, path);
      for (std::size_t i = 0; i + 1 < v.items.size(); i += 2) {
        const PickleValue& k = *v.items[i];
        Json inner = nullptr;
        if (!path.is_null() && k.kind == Kind::string) {
          inner = path;
          inner.push_back(k.text);
        }
        visit(*v.items[i + 1], join(key, key_text(k)), inner, candidate);
      }
    } else {
      for (std::size_t i = 0; i < v.items.size(); ++i)
        visit(*v.items[i], join(key, std::to_string(i)), nullptr);
    }
    on_path_.erase(&v);
  }

  Checkpoint finish(const PickleValue& root) && {
    std::size_t best = kNone;
    for (std::size_t i = 0; i < candidates_.size(); ++i)
      if (best == kNone || candidates_[i].elements > candidates_[best].elements) best = i;
    if (root.kind == Kind::tensor) {  // a bare tensor: the state dict of itself
      out_.state_dict_path = Json::array();
      out_.tensors.front().in_state_dict = true;
    } else if (best != kNone) {
      const Candidate& chosen = candidates_[best];
      out_.state_dict_path = chosen.path;
      const std::size_t prefix = chosen.key.empty() ? 0 : chosen.key.size() + 1;
      for (std::size_t i = 0; i < out_.tensors.size(); ++i) {
        if (parents_[i] != best) continue;
        CheckpointTensor& t = out_.tensors[i];
        t.in_state_dict = true;
        t.dict_key = t.key.substr(prefix);
      }
    } else {
      out_.state_dict_path = nullptr;
    }
    return std::move(out_);
  }

 private:
  static constexpr std::size_t kNone = static_cast<std::size_t>(-1);

  struct Candidate {
    Json path;
    std::string key;
    std::int64_t elements = 0;
  };

  // a dict of tensors under string keys (and nn.Module's `_extra_state` entries of any
  // value), reached through string keys: a candidate state dict; kNone for any other dict
  std::size_t consider_state_dict(const PickleValue& dict, const std::string& key,
                                  const Json& path) {
    if (path.is_null()) return kNone;
    std::int64_t elements = 0;
    bool tensors = false;
    for (std::size_t i = 0; i + 1 < dict.items.size(); i += 2) {
      const PickleValue& k = *dict.items[i];
      const PickleValue& value = *dict.items[i + 1];
      if (k.kind == Kind::string && value.kind == Kind::tensor) {
        tensors = true;
        if (__builtin_add_overflow(elements, value.numel, &elements)) elements = INT64_MAX;
      } else if (!is_extra_state(k)) {
        return kNone;
      }
    }
    if (!tensors) return kNone;
    candidates_.push_back({path, key, elements});
    return candidates_.size() - 1;
  }

  std::string join(const std::string& key, const std::string& segment) {
    charge(key.size() + 1 + segment.size());
    return key.empty() ? segment : key + "." + segment;
  }
  void charge(std::size_t bytes) {
    key_bytes_ += bytes;
    if (key_bytes_ > kMaxKeyBytes)
      throw Error(label_ + ": its keys add up to more than " + std::to_string(kMaxKeyBytes >> 20) +
                  " MiB");
  }

  const std::string& label_;
  Checkpoint out_;
  std::vector<std::size_t> parents_;  // of each of out_.tensors
  std::vector<Candidate> candidates_;
  std::unordered_set<const PickleValue*> on_path_;
  std::size_t visits_ = 0;
  std::size_t key_bytes_ = 0;
};

}  // namespace

Checkpoint read_checkpoint(PickleRef root, const std::string& label) {
  Walk walk(label);
  walk.visit(*root, "", Json::array());
  return std::move(walk).finish(*root);
}

}  // namespace vin::diagnostics
