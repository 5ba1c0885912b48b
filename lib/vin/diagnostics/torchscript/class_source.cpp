#include "vin/diagnostics/torchscript/class_source.h"

#include <algorithm>

#include "vin/diagnostics/pickle/pickle_reader.h"

namespace vin::diagnostics {
namespace {

bool starts_with(std::string_view text, std::string_view prefix) {
  return text.substr(0, prefix.size()) == prefix;
}

std::size_t indent_of(std::string_view line) {
  const std::size_t first = line.find_first_not_of(' ');
  return first == std::string_view::npos ? line.size() : first;
}

// The quoted names of `  __parameters__ = ["weight", "bias", ]`.
std::unordered_set<std::string> quoted_names(std::string_view line) {
  // TorchScript prints the list on one line; anything else is not a header this reader knows
  if (line.find(']') == std::string_view::npos)
    throw UnsupportedPickle("a class header list that does not end on its line");
  std::unordered_set<std::string> names;
  std::size_t pos = 0;
  while ((pos = line.find('"', pos)) != std::string_view::npos) {
    const std::size_t end = line.find('"', pos + 1);
    if (end == std::string_view::npos) throw UnsupportedPickle("unterminated name in a header");
    const std::string_view name = line.substr(pos + 1, end - pos - 1);
    if (name.find('\\') != std::string_view::npos)
      throw UnsupportedPickle("escaped attribute name in a class header");
    names.emplace(name);
    pos = end + 1;
  }
  return names;
}

// `  name : Type` (an attribute declaration), as name and type; empty name when it is not one.
std::pair<std::string, std::string> attribute_declaration(std::string_view line) {
  const std::string_view rest = line.substr(2);
  const std::size_t colon = rest.find(" : ");
  if (colon == std::string_view::npos || colon == 0) return {};
  const std::string_view name = rest.substr(0, colon);
  const bool identifier = std::all_of(name.begin(), name.end(), [](char c) {
    return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
  });
  if (!identifier) return {};
  return {std::string(name), std::string(rest.substr(colon + 3))};
}

}  // namespace

void BracketCounter::feed_line(std::string_view line) {
  SourceScanner scanner;  // a string literal ends with its line
  for (const char c : line) {
    const SourceScanner::Role role = scanner.feed(c);
    if (role == SourceScanner::Role::open)
      deepest_ = std::max(deepest_, ++depth_);
    else if (role == SourceScanner::Role::close && depth_ > 0)
      --depth_;
  }
}

const MethodSource* ClassSource::method(std::string_view name) const {
  for (const auto& m : methods)
    if (m.name == name) return &m;
  return nullptr;
}

void read_class_sources(const std::string& record, std::string_view source, ClassSources& classes,
                        FunctionSources* functions) {
  std::string module = record.substr(5, record.size() - 5 - 3);  // drop "code/" and ".py"
  std::replace(module.begin(), module.end(), '/', '.');
  ClassSource* current = nullptr;
  MethodSource* method = nullptr;
  std::size_t body_indent = 4;  // of the method being read: 2 for a free function
  BracketCounter signature;  // the brackets of the signature being read
  bool in_signature = false;
  std::string current_name;     // the class being read, for errors
  std::size_t line_number = 0;  // of the line being read, counting from 1
  std::size_t pos = 0;
  while (pos < source.size()) {
    std::size_t end = source.find('\n', pos);
    if (end == std::string_view::npos) end = source.size();
    const std::string_view line = source.substr(pos, end - pos);
    const std::size_t line_start = pos;
    pos = end + 1;
    ++line_number;
    if (in_signature) {
      signature.feed_line(line);
      if (signature.depth() == 0 && !line.empty() && line.back() == ':') {
        in_signature = false;
        method->signature =
            source.substr(static_cast<std::size_t>(method->signature.data() - source.data()),
                          end - static_cast<std::size_t>(method->signature.data() - source.data()));
      }
      continue;
    }
    if (line.empty()) continue;
    const std::size_t indent = indent_of(line);
    if (indent == 0) {
      // TorchScript prints nothing but classes and functions after a class: any other line
      // there is the rest of something this reader did not understand (a string literal over
      // two lines, which LibTorch refuses too), and reading on would leave the class's methods
      // out without a word
      if (current && !starts_with(line, "class ") && !starts_with(line, "def "))
        throw UnsupportedPickle("line " + std::to_string(line_number) + " of " + record +
                                ", in class " + current_name +
                                ", is not TorchScript this reader knows");
      method = nullptr;
      current = nullptr;  // a top-level statement ends the class
      if (starts_with(line, "def ") && functions) {
        const std::size_t open = line.find('(');
        if (open == std::string_view::npos) throw UnsupportedPickle("unreadable function header");
        const std::string name(line.substr(4, open - 4));
        method = &(*functions)[module + "." + name];
        *method = MethodSource{name, source.substr(line_start, line.size()), {}};
        body_indent = 2;
        signature = BracketCounter();
        signature.feed_line(line);
        in_signature = !(signature.depth() == 0 && line.back() == ':');
        continue;
      }
      if (!starts_with(line, "class ")) continue;
      const std::size_t paren = line.find('(');
      const std::size_t colon = line.find(':');
      const std::size_t name_end = std::min(paren, colon);
      if (name_end == std::string_view::npos) throw UnsupportedPickle("unreadable class header");
      const std::string name = module + "." + std::string(line.substr(6, name_end - 6));
      current = &classes[name];
      current_name = name;
      current->is_module =
          paren != std::string_view::npos && line.substr(paren).rfind("(Module):", 0) == 0;
      continue;
    }
    if (indent >= body_indent && method) {
      method->body.push_back(line.substr(body_indent));
      continue;
    }
    if (!current) continue;  // the body of a free function not asked for
    method = nullptr;
    if (indent != 2) continue;
    if (starts_with(line, "  def ")) {
      const std::size_t open = line.find('(');
      if (open == std::string_view::npos) throw UnsupportedPickle("unreadable method header");
      current->methods.push_back(MethodSource{std::string(line.substr(6, open - 6)),
                                              source.substr(line_start + 2, line.size() - 2),
                                              {}});
      method = &current->methods.back();
      body_indent = 4;
      signature = BracketCounter();
      signature.feed_line(line);
      in_signature = !(signature.depth() == 0 && line.back() == ':');
    } else if (starts_with(line, "  __parameters__ = [")) {
      current->parameters = quoted_names(line.substr(19));
    } else if (starts_with(line, "  __buffers__ = [")) {
      current->buffers = quoted_names(line.substr(16));
    } else if (starts_with(line, "  __forward_pre_hooks__ = [") ||
               starts_with(line, "  __forward_hooks__ = [")) {
      for (auto& hook : quoted_names(line.substr(line.find('['))))
        current->hooks.insert(std::move(hook));
    } else if (auto declaration = attribute_declaration(line); !declaration.first.empty()) {
      // a constant: `  name : Final[T] = literal` (a type never holds " = ")
      const std::size_t equals = declaration.second.find(" = ");
      if (equals != std::string::npos && starts_with(declaration.second, "Final["))
        current->constants.emplace_back(std::move(declaration.first),
                                        declaration.second.substr(equals + 3));
      else
        current->attributes.push_back(std::move(declaration));
    }
  }
  if (in_signature) throw UnsupportedPickle("a method signature that does not end");
}

}  // namespace vin::diagnostics
