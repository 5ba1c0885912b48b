// What the TorchScript source under an archive's code/ says about its classes, read as text and
// never compiled or run: which classes are modules, their parameter and buffer lists, their
// attribute declarations, and their methods' signatures and bodies. TorchScript's printer writes
// this source in a fixed layout (a class at column 0, its declarations at two spaces, method
// bodies at four), which is all this reader relies on.
#pragma once

#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

namespace vin::diagnostics {

/// A character of a TorchScript (Python) identifier: a letter, a digit or '_'.
inline bool is_identifier_char(char c) {
  return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

/// One method of a class: its name, its signature as printed (from `def` to the closing `:`,
/// possibly several lines), and the lines of its body without their four-space indent.
struct MethodSource {
  std::string name;
  std::string_view signature;
  std::vector<std::string_view> body;
};

/// One TorchScript class.
struct ClassSource {
  bool is_module = false;                      ///< declared `class X(Module):`
  std::unordered_set<std::string> parameters;  ///< `__parameters__ = [...]`
  std::unordered_set<std::string> buffers;     ///< `__buffers__ = [...]`
  /// `__forward_pre_hooks__` and `__forward_hooks__`: functions printed among the methods that
  /// are hooks, not methods of the module
  std::unordered_set<std::string> hooks;
  /// `name : Type` declarations (the module's slots), in the order the class lists them.
  std::vector<std::pair<std::string, std::string>> attributes;
  /// `name : Final[Type] = literal` declarations (the class's constants), as name and literal
  /// text, in the order the class lists them.
  std::vector<std::pair<std::string, std::string>> constants;
  std::vector<MethodSource> methods;  ///< in the order the source defines them

  /// The method `name`, or null.
  const MethodSource* method(std::string_view name) const;
};

/// TorchScript source read a character at a time: what each character is to bracket nesting,
/// with string literals (in ' or ", a backslash escaping the next character) skipped. The one
/// reading of brackets and quotes behind BracketCounter and the literal parser's splits.
class SourceScanner {
 public:
  enum class Role { quoted, open, close, other };
  Role feed(char c) {
    if (escaped_) {
      escaped_ = false;
      return Role::quoted;
    }
    if (quote_) {
      if (c == '\\')
        escaped_ = true;
      else if (c == quote_)
        quote_ = 0;
      return Role::quoted;
    }
    if (c == '"' || c == '\'') {
      quote_ = c;
      return Role::quoted;
    }
    if (c == '(' || c == '[' || c == '{') return Role::open;
    if (c == ')' || c == ']' || c == '}') return Role::close;
    return Role::other;
  }
  /// Whether a string literal is open.
  bool in_string() const { return quote_ != 0; }

 private:
  char quote_ = 0;
  bool escaped_ = false;
};

/// The bracket nesting (`(`, `[`, `{`) of TorchScript source, fed a line at a time; string
/// literals are skipped (a quote does not go past its line in printed TorchScript).
class BracketCounter {
 public:
  /// Feeds one line, without its newline.
  void feed_line(std::string_view line);
  /// Brackets open after the lines fed so far.
  long depth() const { return depth_; }
  /// The most brackets ever open at once.
  long deepest() const { return deepest_; }

 private:
  long depth_ = 0;
  long deepest_ = 0;
};

/// Classes by qualified name (`__torch__.torch.nn.modules.conv.Conv2d`).
using ClassSources = std::unordered_map<std::string, ClassSource>;

/// Free functions (`def f(...)` at column 0, bodies at two spaces) by qualified name
/// (`__torch__.torch.nn.functional.relu`).
using FunctionSources = std::unordered_map<std::string, MethodSource>;

/// Reads the classes of one code/ record into `classes`, and its free functions into `functions`
/// where that is given. `record` is its name relative to the archive's top folder (e.g.
/// "code/__torch__/torch/nn/conv.py", whose classes are named `__torch__.torch.nn.conv.<Name>`);
/// `source` must outlive `classes` and `functions` (method text points into it). Throws
/// UnsupportedPickle for a layout this reader does not know.
void read_class_sources(const std::string& record, std::string_view source, ClassSources& classes,
                        FunctionSources* functions = nullptr);

}  // namespace vin::diagnostics
