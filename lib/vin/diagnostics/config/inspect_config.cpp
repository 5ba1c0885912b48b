#include "vin/diagnostics/config/inspect_config.h"

#include <yaml-cpp/depthguard.h>
#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <unordered_map>
#include <unordered_set>

#include "vin/diagnostics/formats/model_file.h"
#include "vin/diagnostics/config/yaml_messages.h"
#include "vin/diagnostics/records/error.h"
#include "vin/diagnostics/json/json_encoding.h"
#include "vin/diagnostics/text/printable.h"

namespace vin::diagnostics {
namespace {

constexpr const char* kYamlTagPrefix = "tag:yaml.org,2002:";
constexpr const char* kDeclaredKey = "__declared__";
constexpr const char* kTargetTypeKey = "target_type";
constexpr const char* kPythonNameTag = "python/name:";
// A rendering is small; these bound what a hostile document can make the walk do.
constexpr std::size_t kMaxBytes = std::size_t{64} << 20;
constexpr std::size_t kMaxFields = 100000;
constexpr std::size_t kMaxRecordBytes = std::size_t{64} << 20;  // field paths and values, expanded
constexpr std::size_t kMaxPathDepth = 500;

struct Resolved {
  std::string type;
  ConfigValue value;
};

// Python refuses to turn longer digit strings into ints (sys.get_int_max_str_digits()); a
// rendering cannot hold one, and the base conversion below stays cheap.
constexpr std::size_t kMaxIntegerDigits = 4300;

// An integer literal with more digits than Python reads (Error naming where it is).
class IntegerTooLong : public std::runtime_error {
 public:
  IntegerTooLong()
      : std::runtime_error("an integer of more than " + std::to_string(kMaxIntegerDigits) +
                           " digits (Python reads at most that many)") {}
};

// Decimal digits of a non-negative integer written in base 8 or 16, up to kMaxIntegerDigits.
std::string to_decimal(std::string_view digits, int base) {
  std::vector<int> decimal{0};  // little-endian decimal digits
  for (char c : digits) {
    int carry = std::isdigit(static_cast<unsigned char>(c))
                    ? c - '0'
                    : std::tolower(static_cast<unsigned char>(c)) - 'a' + 10;
    for (int& d : decimal) {
      const int v = d * base + carry;
      d = v % 10;
      carry = v / 10;
    }
    while (carry) {
      decimal.push_back(carry % 10);
      carry /= 10;
    }
    if (decimal.size() > kMaxIntegerDigits) throw IntegerTooLong();
  }
  std::string out;
  for (auto it = decimal.rbegin(); it != decimal.rend(); ++it)
    out.push_back(static_cast<char>('0' + *it));
  return out;
}

// The YAML 1.2 core schema's patterns, matched by hand in one pass each (std::regex recurses
// once per character: a scalar of 30,000 digits overflowed the stack).
bool one_of(std::string_view text, std::initializer_list<std::string_view> words) {
  return std::find(words.begin(), words.end(), text) != words.end();
}
bool all_digits(std::string_view text, bool (*digit)(char)) {
  return !text.empty() && std::all_of(text.begin(), text.end(), digit);
}
bool is_dec(char c) { return c >= '0' && c <= '9'; }
bool is_oct(char c) { return c >= '0' && c <= '7'; }
bool is_hex(char c) { return std::isxdigit(static_cast<unsigned char>(c)) != 0; }
std::string_view without_sign(std::string_view text) {
  return (!text.empty() && (text[0] == '-' || text[0] == '+')) ? text.substr(1) : text;
}
// [-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?
bool is_core_float(std::string_view text) {
  std::string_view t = without_sign(text);
  std::size_t i = 0;
  const auto digits = [&] {
    const std::size_t from = i;
    while (i < t.size() && is_dec(t[i])) ++i;
    return i - from;
  };
  if (i < t.size() && t[i] == '.') {
    ++i;
    if (digits() == 0) return false;
  } else {
    if (digits() == 0) return false;
    if (i < t.size() && t[i] == '.') {
      ++i;
      digits();
    }
  }
  if (i < t.size() && (t[i] == 'e' || t[i] == 'E')) {
    ++i;
    if (i < t.size() && (t[i] == '-' || t[i] == '+')) ++i;
    if (digits() == 0) return false;
  }
  return i == t.size();
}

// YAML 1.2 core schema, for untagged plain scalars.
Resolved resolve_plain(const std::string& text) {
  if (one_of(text, {"null", "Null", "NULL", "~", ""})) return {"builtins.NoneType", nullptr};
  if (one_of(text, {"true", "True", "TRUE"})) return {"builtins.bool", true};
  if (one_of(text, {"false", "False", "FALSE"})) return {"builtins.bool", false};
  auto integer = [&](std::string_view digits, int base, bool negative) -> Resolved {
    if (digits.size() > kMaxIntegerDigits) throw IntegerTooLong();
    std::uint64_t magnitude = 0;
    const auto [end, ec] =
        std::from_chars(digits.data(), digits.data() + digits.size(), magnitude, base);
    const std::uint64_t limit = negative ? std::uint64_t{1} << 63 : (std::uint64_t{1} << 63) - 1;
    if (ec != std::errc() || end != digits.data() + digits.size() || magnitude > limit) {
      // beyond 64 bits: the decimal digits, as a string
      if (base == 10) {
        std::string kept(digits);
        kept.erase(0, std::min(kept.find_first_not_of('0'), kept.size() - 1));
        return {"builtins.int", (negative ? "-" : "") + kept};
      }
      return {"builtins.int", to_decimal(digits, base)};
    }
    const std::int64_t value =
        negative ? static_cast<std::int64_t>(~magnitude + 1) : static_cast<std::int64_t>(magnitude);
    return {"builtins.int", value};
  };
  const std::string_view view(text);
  if (all_digits(without_sign(view), is_dec))  // [-+]?[0-9]+
    return integer(without_sign(view), 10, text[0] == '-');
  if (view.substr(0, 2) == "0o" && all_digits(view.substr(2), is_oct))
    return integer(view.substr(2), 8, false);
  if (view.substr(0, 2) == "0x" && all_digits(view.substr(2), is_hex))
    return integer(view.substr(2), 16, false);
  if (is_core_float(view)) return {"builtins.float", std::strtod(text.c_str(), nullptr)};
  if (one_of(without_sign(view), {".inf", ".Inf", ".INF"}))
    return {"builtins.float", text[0] == '-' ? -HUGE_VAL : HUGE_VAL};
  if (one_of(view, {".nan", ".NaN", ".NAN"})) return {"builtins.float", std::nan("")};
  return {"builtins.str", text};
}

// "FILE:LINE:COLUMN: ", 1-based; an empty document has no position and reads as 1:1.
std::string location(const std::string& source, const YAML::Mark& mark) {
  const int line = mark.line < 0 ? 0 : mark.line;
  const int column = mark.column < 0 ? 0 : mark.column;
  return source + ":" + std::to_string(line + 1) + ":" + std::to_string(column + 1) + ": ";
}

bool is_yaml_tag(const std::string& tag) { return tag.rfind(kYamlTagPrefix, 0) == 0; }

// YAML tags are URIs: characters such as '<' and '>' (in `f.<locals>.Cfg`) arrive %-escaped.
std::string percent_decode(const std::string& text) {
  std::string out;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '%' && i + 2 < text.size() + 0 &&
        std::isxdigit(static_cast<unsigned char>(text[i + 1])) &&
        std::isxdigit(static_cast<unsigned char>(text[i + 2]))) {
      out.push_back(static_cast<char>(std::stoi(text.substr(i + 1, 2), nullptr, 16)));
      i += 2;
    } else {
      out.push_back(text[i]);
    }
  }
  return out;
}

// The type a node's own tag names ("!pkg.Type" -> "pkg.Type"); nothing for untagged nodes and
// YAML's own tags.
std::optional<std::string> custom_tag(const YAML::Node& node) {
  const std::string& tag = node.Tag();
  if (tag.empty() || tag == "?" || tag == "!" || is_yaml_tag(tag)) return std::nullopt;
  if (tag[0] == '!') return percent_decode(tag.substr(1));
  return percent_decode(tag);
}

class ConfigWalker {
 public:
  ConfigWalker(std::string source, const std::string& text, UnwalkedValues* unwalked)
      : source_(std::move(source)), text_(text), unwalked_(unwalked) {}

  ModelStructureSpec run(const YAML::Node& root) {
    if (!root.IsMap()) fail(root, "the root of a configuration rendering must be a mapping");
    const std::optional<std::string> root_type = custom_tag(root);
    lenient_ = !root_type;
    for (auto it = root.begin(); it != root.end(); ++it)
      if (it->first.IsScalar() && it->first.Scalar() == kDeclaredKey) read_declared(it->second);
    std::vector<std::string> path;
    walk_model(root, root_type, path, /*is_root=*/true);
    return ModelStructureSpec(root_type, root_target_type_, std::move(fields_));
  }

 private:
  [[noreturn]] void fail(const YAML::Node& at, const std::string& why) const {
    throw Error(location(source_, at.Mark()) + why);
  }

  void read_declared(const YAML::Node& node) {
    has_declared_ = true;
    if (node.IsNull()) return;
    if (!node.IsMap()) fail(node, "__declared__ must map model types to their fields' annotations");
    for (auto it = node.begin(); it != node.end(); ++it) {
      if (!it->first.IsScalar()) fail(it->first, "__declared__ keys must be model type names");
      const std::string type = it->first.Scalar();
      auto& fields = declared_[type];
      if (it->second.IsNull()) continue;
      if (!it->second.IsMap())
        fail(it->second, "__declared__ entry '" + printable(type, 200) +
                             "' must be a mapping of field names to annotation strings");
      for (auto f = it->second.begin(); f != it->second.end(); ++f) {
        if (!f->first.IsScalar() || !f->second.IsScalar())
          fail(f->second.IsScalar() ? f->first : f->second,
               "__declared__ entry '" + printable(type, 200) +
                   "' must be a mapping of field names to annotation strings");
        fields.emplace_back(f->first.Scalar(), f->second.Scalar());
      }
    }
  }

  bool is_model(const YAML::Node& mapping) const {
    if (lenient_) return true;
    const auto tag = custom_tag(mapping);
    if (!tag) return false;
    return has_declared_ ? declared_.count(*tag) > 0 : true;
  }

  void walk_model(const YAML::Node& mapping, const std::optional<std::string>& type,
                  std::vector<std::string>& path, bool is_root) {
    if (path.size() > kMaxPathDepth)
      fail(mapping,
           "the configuration nests deeper than " + std::to_string(kMaxPathDepth) + " levels");
    std::unordered_set<std::string> done;
    if (type) {
      const auto it = declared_.find(*type);
      if (it != declared_.end()) {
        // the mapping's keys indexed once (the first of a repeated key, which the loop below
        // refuses): a lookup per declared field would make the walk quadratic in the fields
        std::unordered_map<std::string, YAML::Node> values;
        for (auto entry = mapping.begin(); entry != mapping.end(); ++entry)
          if (entry->first.IsScalar()) values.emplace(entry->first.Scalar(), entry->second);
        for (const auto& [name, annotation] : it->second) {
          const auto value = values.find(name);
          if (value == values.end())
            fail(mapping, "field '" + printable(name, 200) + "' of " + printable(*type, 200) +
                              " is declared but has no value");
          record_field(name, value->second, annotation, path, is_root);
          done.insert(name);
        }
      }
    }
    std::unordered_set<std::string> seen;
    for (auto it = mapping.begin(); it != mapping.end(); ++it) {
      if (!it->first.IsScalar()) fail(it->first, "a field name must be a string");
      const std::string& name = it->first.Scalar();
      if (!seen.insert(name).second)
        fail(it->first, "duplicate key '" + printable(name, 200) + "'");
      if (is_root && name == kDeclaredKey) continue;
      if (done.count(name) > 0) continue;
      record_field(name, it->second, std::nullopt, path, is_root);
    }
  }

  void add(const std::vector<std::string>& path, const std::optional<std::string>& declared,
           std::string configured, ConfigValue value, const YAML::Node& at) {
    if (fields_.size() >= kMaxFields)
      fail(at, "more than " + std::to_string(kMaxFields) +
                   " fields: too large to walk (a YAML alias bomb?)");
    fields_.emplace_back(path, declared, std::move(configured), std::move(value));
  }

  // target_type holds a class: a qualified name as a plain string or as !!python/name:X ''.
  std::optional<std::string> class_name(const YAML::Node& node) const {
    if (!node.IsScalar()) return std::nullopt;
    const std::string& tag = node.Tag();
    const std::string python_name = std::string(kYamlTagPrefix) + kPythonNameTag;
    if (tag.rfind(python_name, 0) == 0) return percent_decode(tag.substr(python_name.size()));
    if (tag == "!" || tag == std::string(kYamlTagPrefix) + "str") return node.Scalar();
    if (tag == "?") {
      const Resolved r = resolve_plain_at(node, node.Scalar());
      if (r.type == "builtins.str") return node.Scalar();
    }
    return std::nullopt;
  }

  Resolved resolve_scalar(const YAML::Node& node) const {
    const std::string& tag = node.Tag();
    const std::string text = node.IsNull() ? "" : node.Scalar();
    if (is_yaml_tag(tag)) {
      const std::string kind = tag.substr(std::strlen(kYamlTagPrefix));
      if (kind == "str") return {"builtins.str", text};
      if (kind == "null") return {"builtins.NoneType", nullptr};
      const Resolved r = resolve_plain_at(node, text);
      const std::string wanted = kind == "int"     ? "builtins.int"
                                 : kind == "float" ? "builtins.float"
                                 : kind == "bool"  ? "builtins.bool"
                                                   : "";
      if (wanted.empty()) fail(node, "unsupported YAML tag !!" + printable(kind, 100));
      if (r.type == wanted) return r;
      if (wanted == "builtins.float" && r.type == "builtins.int" &&
          std::holds_alternative<std::int64_t>(r.value))
        return {wanted, static_cast<double>(std::get<std::int64_t>(r.value))};
      fail(node, "'" + printable(text, 100) + "' is not a valid !!" + kind);
    }
    if (node.IsNull()) return {"builtins.NoneType", nullptr};
    if (tag == "!") return {"builtins.str", text};  // quoted: always a string
    return resolve_plain_at(node, text);
  }

  Resolved resolve_plain_at(const YAML::Node& node, const std::string& text) const {
    try {
      return resolve_plain(text);
    } catch (const IntegerTooLong& e) {
      fail(node, e.what());
    }
  }

  // Counts the bytes a field's record copies (its path and scalar), so that aliases, which
  // yaml-cpp shares, cannot make the records larger than the budget (one 8 MB scalar aliased by
  // thousands of fields).
  void charge(const std::vector<std::string>& path, const YAML::Node& value) {
    std::size_t n = value.IsScalar() ? value.Scalar().size() : 0;
    for (const auto& p : path) n += p.size();
    charge_bytes(n, value);
  }

  void record_field(const std::string& name, const YAML::Node& value,
                    const std::optional<std::string>& declared, std::vector<std::string>& path,
                    bool parent_is_root) {
    path.push_back(name);
    charge(path, value);
    if (name == kTargetTypeKey && (value.IsScalar() || value.IsNull())) {
      if (auto cls = class_name(value)) {
        add(path, declared, "builtins.type", TypeMarker{*cls}, value);
        if (parent_is_root) root_target_type_ = *cls;
        path.pop_back();
        return;
      }
    }
    if (value.IsScalar() || value.IsNull()) {
      const Resolved r = resolve_field_scalar(value);
      add(path, declared, r.type, r.value, value);
    } else if (value.IsMap()) {
      const auto tag = custom_tag(value);
      const std::string type = tag ? *tag : "builtins.dict";
      add(path, declared, type, TypeMarker{type}, value);
      if (is_model(value))
        walk_model(value, tag, path, /*is_root=*/false);
      else if (unwalked_)
        unwalked_->emplace_back(path, contents(value, path.size(), /*walked_models=*/false));
    } else if (value.IsSequence()) {
      const auto tag = custom_tag(value);
      const std::string type = tag ? *tag : "builtins.list";
      add(path, declared, type, TypeMarker{type}, value);
      if (unwalked_)
        unwalked_->emplace_back(path, contents(value, path.size(), /*walked_models=*/true));
      std::size_t index = 0;
      for (const auto& item : value) {
        if (item.IsMap() && is_model(item)) {
          path.push_back(std::to_string(index));
          walk_model(item, custom_tag(item), path, /*is_root=*/false);
          path.pop_back();
        }
        ++index;
      }
    }
    path.pop_back();
  }

  // A scalar field's type and value; a tagged scalar is an enum member, its value resolved like
  // an untagged one.
  Resolved resolve_field_scalar(const YAML::Node& value) const {
    Resolved r = resolve_scalar(value);
    if (const auto tag = custom_tag(value)) {
      const std::string scalar = value.IsNull() ? "" : value.Scalar();
      r = quoted_after_tag(value) ? Resolved{"", scalar} : resolve_plain_at(value, scalar);
      r.type = *tag;
    }
    return r;
  }

  // What an unwalked field holds, for diff: mappings as objects, sequences as arrays, scalars as
  // their field values would be. `walked_models`: the node is a sequence whose model items the
  // walk records on their own, which stand here as their type marker. Every scalar is charged to
  // the budget, so aliases cannot make this larger than the records may be.
  Json contents(const YAML::Node& node, std::size_t depth, bool walked_models) {
    if (depth > kMaxPathDepth)
      fail(node,
           "the configuration nests deeper than " + std::to_string(kMaxPathDepth) + " levels");
    if (node.IsMap()) {
      JsonObjectBuilder out;
      for (auto it = node.begin(); it != node.end(); ++it) {
        const std::string key = it->first.IsScalar() ? it->first.Scalar() : "<complex key>";
        charge_bytes(key.size(), it->first);
        out.set(key, contents(it->second, depth + 1, false));
      }
      return out.take();
    }
    if (node.IsSequence()) {
      Json out = Json::array();
      for (const auto& item : node) {
        if (walked_models && item.IsMap() && is_model(item)) {
          const auto tag = custom_tag(item);
          out.push_back(to_json(ConfigValue(TypeMarker{tag ? *tag : "builtins.dict"})));
        } else {
          out.push_back(contents(item, depth + 1, false));
        }
      }
      return out;
    }
    charge_bytes(node.IsScalar() ? node.Scalar().size() : 0, node);
    const Resolved r = resolve_field_scalar(node);
    // an integer beyond 64 bits: the records write its digits as a string (contract 6), the
    // comparison keeps it an integer, never equal to that string
    if (r.type == "builtins.int")
      if (const auto* digits = std::get_if<std::string>(&r.value)) return big_integer_json(*digits);
    return to_json(r.value);
  }

  void charge_bytes(std::size_t n, const YAML::Node& at) {
    bytes_ += n;
    if (bytes_ > kMaxRecordBytes)
      fail(at, "its fields' names and values expand to more than " +
                   std::to_string(kMaxRecordBytes >> 20) +
                   " MiB: too large to walk (a YAML alias bomb?)");
  }

  // yaml-cpp forgets whether a tagged scalar was quoted; the text after the tag tells
  bool quoted_after_tag(const YAML::Node& node) const {
    std::size_t pos = static_cast<std::size_t>(std::max(0, node.Mark().pos));
    if (pos >= text_.size() || text_[pos] != '!') return false;
    while (pos < text_.size() && !std::isspace(static_cast<unsigned char>(text_[pos]))) ++pos;
    while (pos < text_.size() && (text_[pos] == ' ' || text_[pos] == '\t')) ++pos;
    return pos < text_.size() && (text_[pos] == '"' || text_[pos] == '\'');
  }

  std::string source_;
  const std::string& text_;
  bool lenient_ = false;
  bool has_declared_ = false;
  std::unordered_map<std::string, std::vector<std::pair<std::string, std::string>>> declared_;
  std::vector<ConfigFieldSpec> fields_;
  std::optional<std::string> root_target_type_;
  std::size_t bytes_ = 0;     // what the records copy, aliases counted each time (charge)
  UnwalkedValues* unwalked_;  // where the contents of unwalked fields go, when wanted
};

// Where each document of the stream starts, from the parser's events (no nodes are built).
// YAML::LoadAll is not used: yaml-cpp 0.7 loops for ever, allocating, when a document starts
// with a token the parser cannot place (a ',' outside a flow collection): it reports an empty
// document and leaves the token where it was (jbeder/yaml-cpp#1040, found by yaml_fuzzer). A
// document that starts where the one before it started is that case, and is refused.
std::vector<YAML::Mark> document_starts(const std::string& text, const std::string& source) {
  struct StartRecorder : YAML::EventHandler {
    std::vector<YAML::Mark> starts;
    void OnDocumentStart(const YAML::Mark& mark) override { starts.push_back(mark); }
    void OnDocumentEnd() override {}
    void OnNull(const YAML::Mark&, YAML::anchor_t) override {}
    void OnAlias(const YAML::Mark&, YAML::anchor_t) override {}
    void OnScalar(const YAML::Mark&, const std::string&, YAML::anchor_t,
                  const std::string&) override {}
    void OnSequenceStart(const YAML::Mark&, const std::string&, YAML::anchor_t,
                         YAML::EmitterStyle::value) override {}
    void OnSequenceEnd() override {}
    void OnMapStart(const YAML::Mark&, const std::string&, YAML::anchor_t,
                    YAML::EmitterStyle::value) override {}
    void OnMapEnd() override {}
  };
  std::istringstream in(text);
  YAML::Parser parser(in);
  StartRecorder recorder;
  while (parser.HandleNextDocument(recorder)) {
    const auto& starts = recorder.starts;
    if (starts.size() >= 2 && starts.back().pos == starts[starts.size() - 2].pos) {
      const YAML::Mark& stuck = starts.back();
      throw Error(location(source, stuck) +
                  "malformed YAML: " + yaml_problem("unknown token", text, stuck.pos));
    }
  }
  return recorder.starts;
}

// The configuration in `file`: an archive's config.yaml, or a YAML file.
ModelStructureSpec read_config_file(const ClassifiedFile& file, UnwalkedValues* unwalked) {
  const std::string& path = file.path();
  // JSON is YAML too, but records this tool wrote are no rendering (their walk would describe
  // the records' fields as a configuration)
  if (!serves(file, kConfig)) refuse(file, kConfig);
  if (file.zip) {
    const ArchiveLayout layout = open_torchscript_archive(file);
    const auto text = read_archive_record(layout, "extra/config.yaml", kMaxBytes);
    if (!text)
      throw Error(path +
                  ": the archive carries no config.yaml; save the rendering with "
                  "torch.jit.save(m, path, _extra_files={\"config.yaml\": text})");
    return inspect_config(*text, path + " (extra/config.yaml)", unwalked);
  }
  return inspect_config(file.file->read_all(kMaxBytes, "a configuration"), path, unwalked);
}

}  // namespace

ModelStructureSpec inspect_config(const std::string& text, const std::string& source,
                                  UnwalkedValues* unwalked) {
  // YAML text is UTF-8: point at the first byte that is not
  if (const std::size_t bad = first_invalid_utf8(text); bad != std::string::npos) {
    const std::size_t line_start = bad == 0 ? std::string::npos : text.rfind('\n', bad - 1);
    const std::size_t begin = line_start == std::string::npos ? 0 : line_start + 1;
    const auto line =
        1 + std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(bad), '\n');
    char byte[8];
    std::snprintf(byte, sizeof byte, "0x%02x", static_cast<unsigned char>(text[bad]));
    throw Error(source + ":" + std::to_string(line) + ":" + std::to_string(bad - begin + 1) +
                ": not UTF-8 text (byte " + byte + ")");
  }
  YAML::Node root;
  try {
    const std::vector<YAML::Mark> starts = document_starts(text, source);
    if (starts.size() > 1)
      throw Error(location(source, starts[1]) +
                  "a rendering is one YAML document; this file holds " +
                  std::to_string(starts.size()));
    root = YAML::Load(text);
  } catch (const YAML::DeepRecursion& e) {
    throw Error(location(source, e.mark) + "the document nests too deeply to read");
  } catch (const YAML::Exception& e) {
    throw Error(location(source, e.mark) +
                "malformed YAML: " + yaml_problem(e.msg, text, e.mark.pos));
  }
  return ConfigWalker(source, text, unwalked).run(root);
}

ModelStructureSpec inspect_config_file(const ClassifiedFile& file, UnwalkedValues* unwalked) {
  return naming_out_of_memory(file.path(), "reading the configuration",
                              [&] { return read_config_file(file, unwalked); });
}

ModelStructureSpec inspect_config_file(const std::string& path, UnwalkedValues* unwalked) {
  return naming_out_of_memory(path, "reading the configuration", [&] {
    return inspect_config_file(open_model_file(path, kConfig, "a configuration"), unwalked);
  });
}

}  // namespace vin::diagnostics
