#include "vin/diagnostics/export/export_module_stack.h"

#include <cctype>
#include <utility>

#include "vin/diagnostics/text/printable.h"

namespace vin::diagnostics {
namespace {

// Where `text`'s entries end: at each ';' outside a source expression's string literals and
// brackets (`L['self'].heads['a;b']` is one path), found as a scan that opens a string only
// where Python's repr of a key would (after '[', '(' or ','), so that a quote in a dotted path
// (a ModuleDict key, `heads.it's`) opens none. Where the scan ends inside a string or a bracket
// (a key holding an unmatched one), at every ';', as torch's own loader splits.
std::vector<std::size_t> entry_ends(std::string_view text) {
  std::vector<std::size_t> at;
  int depth = 0;
  char quote = 0;
  char before = 0;  // the last character outside strings that is not a space
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (quote) {
      if (c == '\\')
        ++i;
      else if (c == quote)
        quote = 0;
      continue;
    }
    if ((c == '\'' || c == '"') && (before == '[' || before == '(' || before == ','))
      quote = c;
    else if (c == '[' || c == '(')
      ++depth;
    else if ((c == ']' || c == ')') && depth > 0)
      --depth;
    else if (c == ';' && depth == 0)
      at.push_back(i);
    if (c != ' ') before = c;
  }
  if (depth > 0 || quote) {
    at.clear();
    for (std::size_t i = 0; i < text.size(); ++i)
      if (text[i] == ';') at.push_back(i);
  }
  at.push_back(text.size());
  return at;
}

[[noreturn]] void refuse(std::string_view entry) {
  throw MalformedModuleStack("the nn_module_stack entry '" + printable(std::string(entry), 200) +
                             "' does not split into key, path and type");
}

// One entry. Neither a key (dynamo's module key, an id) nor a type (a qualified class name)
// holds a comma, so the first and the last comma split it, whatever commas the path holds
// (`getattr(L['fn'], '0')`); torch 2.1's `key:(path,type)` is told apart by its key's `:(`.
ModuleStackEntry split_entry(std::string_view entry) {
  ModuleStackEntry out;
  const std::size_t first = entry.find(',');
  const std::size_t open = entry.find(":(");
  if (open != std::string_view::npos && open < first && !entry.empty() && entry.back() == ')') {
    const std::string_view inner = entry.substr(open + 2, entry.size() - open - 3);
    const std::size_t last = inner.rfind(',');
    if (last == std::string_view::npos) refuse(entry);
    out.key = std::string(entry.substr(0, open));
    out.path = std::string(inner.substr(0, last));
    out.type = std::string(inner.substr(last + 1));
  } else {
    const std::size_t last = entry.rfind(',');
    if (first == std::string_view::npos || first == last) refuse(entry);
    out.key = std::string(entry.substr(0, first));
    out.path = std::string(entry.substr(first + 1, last - first - 1));
    out.type = std::string(entry.substr(last + 1));
  }
  if (out.key.empty() || out.type.empty()) refuse(entry);
  return out;
}

// What a source expression holds and a dotted path does not (a ModuleDict key holding one is
// left out: "heads.a[0]" could be either)
constexpr const char* kSourceChars = "[]()'\"{}, \t";

// A module path written as the Python expression dynamo's source names it: what it starts from
// (`self`, or a local's name) and the registration names it steps through.
struct SourcePath {
  std::string base;  // "self" for L['self'] and self; else the local's name
  std::vector<std::string> segments;
};

// The subset of Python dynamo writes for a module's source: L['name'], self, getattr(E, 'name'),
// E.name, E[0], E['name'] and E._modules['name'] (the registry itself: the name is the module's).
class SourceParser {
 public:
  static std::optional<SourcePath> parse(std::string_view text) {
    SourceParser p(text);
    SourcePath out;
    if (!p.expression(out, 0) || p.at_ != text.size()) return std::nullopt;
    return out;
  }

 private:
  explicit SourceParser(std::string_view text) : text_(text) {}

  bool eat(std::string_view word) {
    if (text_.substr(at_, word.size()) != word) return false;
    at_ += word.size();
    return true;
  }
  bool identifier_char(std::size_t i) const {
    return i < text_.size() &&
           (std::isalnum(static_cast<unsigned char>(text_[i])) || text_[i] == '_');
  }

  // a string literal as Python's repr writes one: 'name' or "name", \\ and \' escaped
  bool string_literal(std::string& out) {
    if (at_ >= text_.size() || (text_[at_] != '\'' && text_[at_] != '"')) return false;
    const char quote = text_[at_++];
    for (; at_ < text_.size(); ++at_) {
      char c = text_[at_];
      if (c == quote) {
        ++at_;
        return true;
      }
      if (c == '\\') {
        if (++at_ >= text_.size()) return false;
        c = text_[at_];
        if (c != '\\' && c != '\'' && c != '"') return false;  // any other escape: unsure
      }
      out += c;
    }
    return false;
  }

  // one registration name: not empty, no '.', not the registries' own attributes (a module can
  // have no child named so: add_module refuses the names of attributes it has)
  bool segment(SourcePath& out, std::string name) {
    if (name.empty() || name.find('.') != std::string::npos || name == "_modules" ||
        name == "_parameters" || name == "_buffers")
      return false;
    out.segments.push_back(std::move(name));
    return true;
  }

  bool primary(SourcePath& out, int depth) {
    if (eat("getattr(")) {
      std::string name;
      if (!expression(out, depth + 1) || !eat(",")) return false;
      while (eat(" ")) {
      }
      return string_literal(name) && eat(")") && segment(out, std::move(name));
    }
    if (eat("L[")) return string_literal(out.base) && eat("]") && !out.base.empty();
    if (text_.substr(at_, 4) == "self" && !identifier_char(at_ + 4)) {
      at_ += 4;
      out.base = "self";
      return true;
    }
    return false;
  }

  bool expression(SourcePath& out, int depth) {
    if (depth > 64 || !primary(out, depth)) return false;
    while (at_ < text_.size()) {
      std::string name;
      if (eat("._modules[")) {
        if (!string_literal(name) || !eat("]") || !segment(out, std::move(name))) return false;
      } else if (eat(".")) {
        while (identifier_char(at_)) name += text_[at_++];
        if (!segment(out, std::move(name))) return false;
      } else if (eat("[")) {
        // an index (a Sequential's, a ModuleList's: never negative, which needs the length)
        // or a ModuleDict's key; a slice is a new Sequential, registered nowhere
        if (!string_literal(name))
          while (at_ < text_.size() && std::isdigit(static_cast<unsigned char>(text_[at_])))
            name += text_[at_++];
        if (!eat("]") || !segment(out, std::move(name))) return false;
      } else {
        break;  // the end of getattr's first argument, or text parse() refuses
      }
    }
    return true;
  }

  std::string_view text_;
  std::size_t at_ = 0;
};

std::string joined(const std::vector<std::string>& segments) {
  std::string out;
  for (const std::string& s : segments) out += (out.empty() ? "" : ".") + s;
  return out;
}

// "layers.0" -> "layers_0": a name as dynamo sanitises a source into a module key
std::string sanitised(const std::string& path) {
  std::string out = path;
  for (char& c : out)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  return out;
}

// `L__self___layers_0` (the root's module key, `L__self__`, and the path sanitised): the one
// known module it can be; with no '_' in it, one name, the root's child
std::optional<std::string> unsanitised(const std::string& name, const SanitisedModules& known) {
  if (auto path = known.path_of(name)) return path;
  if (!name.empty() && name.find('_') == std::string::npos) return name;
  return std::nullopt;
}

// What a path is when it is not a source expression: torch's own dotted path ("layers.0",
// "heads.b-c"), a sanitised module key, or nothing (an expression this reader does not know,
// G['helper'].fc: never read as a dotted path, which would invent modules)
std::optional<std::string> plain_path(const std::string& path, const SanitisedModules& known) {
  if (path.empty()) return std::string();
  if (path.find_first_of(kSourceChars) != std::string::npos) return std::nullopt;
  constexpr std::string_view kRootKey = "L__self__";
  if (path.rfind(kRootKey, 0) == 0 && path.find('.') == std::string::npos) {
    const std::string rest = path.substr(kRootKey.size());
    if (rest.empty()) return std::string();
    if (rest.front() != '_') return std::nullopt;
    return unsanitised(rest.substr(1), known);
  }
  // torch's normalisation of `L['self']._modules['layers']._modules['0']` keeps the registry's
  // name: `_modules.layers._modules.0`, which no module can be named (add_module refuses it)
  std::vector<std::string> segments(1);
  for (const char c : path) {
    if (c == '.')
      segments.emplace_back();
    else
      segments.back() += c;
  }
  std::vector<std::string> names;
  for (std::size_t i = 0; i < segments.size(); ++i) {
    if (segments[i].empty() || segments[i] == "_parameters" || segments[i] == "_buffers")
      return std::nullopt;
    if (segments[i] == "_modules" && i + 1 < segments.size()) continue;
    if (segments[i] == "_modules") return std::nullopt;
    names.push_back(segments[i]);
  }
  return joined(names);
}

}  // namespace

std::vector<ModuleStackEntry> split_module_stack(std::string_view text) {
  std::vector<ModuleStackEntry> out;
  if (text.empty()) return out;
  std::size_t begin = 0;
  for (const std::size_t end : entry_ends(text)) {
    out.push_back(split_entry(text.substr(begin, end - begin)));
    begin = end + 1;
  }
  return out;
}

SanitisedModules::SanitisedModules(const std::set<std::string>& paths) {
  for (const std::string& path : paths) {
    if (path.empty()) continue;
    const auto [it, added] = paths_.emplace(sanitised(path), path);
    if (!added) it->second.reset();  // two modules sanitise alike: neither is the one
  }
}

std::optional<std::string> SanitisedModules::path_of(const std::string& name) const {
  const auto it = paths_.find(name);
  return it == paths_.end() ? std::nullopt : it->second;
}

std::vector<std::optional<std::string>> module_stack_paths(
    const std::vector<ModuleStackEntry>& entries, const SanitisedModules& known) {
  std::vector<std::optional<std::string>> out;
  std::set<std::string> root_names = {"self"};  // the locals that hold the root
  for (std::size_t i = 0; i < entries.size(); ++i) {
    const std::string& path = entries[i].path;
    // torch's marker for a node made with no stack of its own (a symbolic size read before the
    // first module call): no module
    if (entries[i].key == kEmptyModuleStackMarker) {
      out.emplace_back();
      continue;
    }
    // `self.layers.0` is the root's dotted path after `self.` (a ModuleDict's `self.heads.b-c`
    // too), `self[0]` a source; `selfish.x` is a dotted path
    const bool dotted_after_self = path.rfind("self.", 0) == 0 &&
                                   path.find_first_of(kSourceChars) == std::string::npos;
    const bool source = path.rfind("L[", 0) == 0 || path.rfind("getattr(", 0) == 0 ||
                        path == "self" || path.rfind("self[", 0) == 0 ||
                        (path.rfind("self.", 0) == 0 && !dotted_after_self);
    if (!source) {
      out.push_back(plain_path(dotted_after_self ? path.substr(5) : path, known));
      continue;
    }
    const auto parsed = SourceParser::parse(path);
    if (parsed && parsed->segments.empty() && !root_names.count(parsed->base) && i > 0 &&
        out[i - 1] == std::string() && entries[i - 1].type == entries[i].type)
      root_names.insert(parsed->base);  // the root under the name of dynamo's frame's local
    if (parsed && root_names.count(parsed->base))
      out.push_back(joined(parsed->segments));
    else
      out.push_back(std::nullopt);
  }
  return out;
}

}  // namespace vin::diagnostics
