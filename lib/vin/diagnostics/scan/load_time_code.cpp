#include "vin/diagnostics/scan/load_time_code.h"

#include <algorithm>
#include <array>
#include <deque>
#include <map>
#include <optional>
#include <set>
#include <unordered_map>

#include "vin/diagnostics/pickle/pickle_reader.h"
#include "vin/diagnostics/torchscript/class_source.h"

namespace vin::diagnostics {
namespace {

bool starts_with(std::string_view text, std::string_view prefix) {
  return text.substr(0, prefix.size()) == prefix;
}

template <std::size_t N>
bool one_of(std::string_view word, const std::array<std::string_view, N>& words) {
  return std::find(words.begin(), words.end(), word) != words.end();
}

// The first component of a dotted name, and the rest (empty when there is no dot)
std::pair<std::string_view, std::string_view> split_first(std::string_view dotted) {
  const std::size_t dot = dotted.find('.');
  if (dot == std::string_view::npos) return {dotted, {}};
  return {dotted.substr(0, dot), dotted.substr(dot + 1)};
}

// torch's operators that read or write files: torch.save and torch.from_file in TorchScript
constexpr std::array<std::string_view, 3> kFileOperators{"save", "load", "from_file"};
// the builtins TorchScript code calls by a bare name that compute and reach nothing
constexpr std::array<std::string_view, 40> kBuiltins{
    "int", "float", "bool", "str", "len", "range", "annotate", "unchecked_cast", "isinstance",
    "uninitialized", "list", "dict", "tuple", "min", "max", "abs", "round", "enumerate", "zip",
    "divmod", "ord", "chr", "hash", "sorted", "any", "all", "sum", "hex", "oct", "bin", "complex",
    "fork", "wait", "Exception", "AssertionError", "RuntimeError", "ValueError", "TypeError",
    "KeyError", "IndexError"};
// Python keywords a parenthesis may follow without a call: `if(x)`, `return (a, b)`
constexpr std::array<std::string_view, 17> kKeywords{
    "if", "elif", "while", "for", "in", "not", "and", "or", "is", "return", "assert", "else",
    "raise", "del", "yield", "lambda", "with"};

// One token of a line of TorchScript: a name, a string, a bracket, or any other character
struct Token {
  enum class Kind { name, dot, open, close, string, other } kind;
  std::string_view text;
};

// The tokens of one line; nothing where a string does not end on its line (the printer never
// writes one that spans lines)
std::optional<std::vector<Token>> tokens_of(std::string_view line) {
  std::vector<Token> out;
  std::size_t i = 0;
  const auto string_at = [&](std::size_t q) -> std::optional<std::size_t> {  // returns its end
    const char quote = line[q];
    const bool triple = line.substr(q, 3) == std::string(3, quote);
    for (std::size_t k = q + (triple ? 3 : 1); k < line.size(); ++k) {
      if (line[k] == '\\') {
        ++k;
        continue;
      }
      if (line[k] != quote) continue;
      if (!triple) return k + 1;
      if (line.substr(k, 3) == std::string(3, quote)) return k + 3;
    }
    return std::nullopt;
  };
  while (i < line.size()) {
    const char c = line[i];
    if (c == ' ') {
      ++i;
    } else if (c == '"' || c == '\'') {
      const auto end = string_at(i);
      if (!end) return std::nullopt;
      out.push_back({Token::Kind::string, line.substr(i, *end - i)});
      i = *end;
    } else if (is_identifier_char(c)) {
      std::size_t end = i;
      while (end < line.size() && is_identifier_char(line[end])) ++end;
      if (end < line.size() && (line[end] == '"' || line[end] == '\'') && end - i <= 2) {
        const auto close = string_at(end);  // a prefixed string: r"...", b'...'
        if (!close) return std::nullopt;
        out.push_back({Token::Kind::string, line.substr(i, *close - i)});
        i = *close;
        continue;
      }
      out.push_back({Token::Kind::name, line.substr(i, end - i)});
      i = end;
    } else {
      const Token::Kind kind = c == '.' ? Token::Kind::dot
                               : c == '(' ? Token::Kind::open
                               : c == ')' ? Token::Kind::close
                                          : Token::Kind::other;
      out.push_back({kind, line.substr(i, 1)});
      ++i;
    }
  }
  return out;
}

// Whether the TorchScript in `text` is laid out as torch's printer writes it, which is all
// class_source relies on: nothing but spaces before a line, an even number of them, a class's
// members two in, a method's body and signature further in, a free function's body two in,
// and at the top only classes, functions, imports and op_version_set. Any other layout (a class
// indented as a whole, a body three in, tabs) could hide code from class_source while LibTorch's
// lexer reads it: the reason, or nothing
std::optional<std::string> layout_problem(std::string_view text) {
  enum class Block { top, class_members, method, function } block = Block::top;
  std::size_t number = 0;
  for (std::size_t pos = 0; pos < text.size();) {
    std::size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(pos, end - pos);
    pos = end + 1;
    ++number;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    const std::size_t indent = line.find_first_not_of(' ');
    if (indent == std::string_view::npos) continue;  // blank
    const auto bad = [&](const char* what) {
      return "line " + std::to_string(number) + " " + what + ", not as torch's printer lays out code";
    };
    if (line[indent] == '\t' || line[indent] == '\f' || line[indent] == '\v') return bad("is indented with tabs");
    if (indent % 2 != 0) return bad("is indented by an odd number of spaces");
    const std::string_view rest = line.substr(indent);
    if (indent == 0) {
      if (starts_with(rest, "class ")) block = Block::class_members;
      else if (starts_with(rest, "def ")) block = Block::function;
      else if (starts_with(rest, "import ") || starts_with(rest, "from ") ||
               starts_with(rest, "op_version_set") || starts_with(rest, "#"))
        block = Block::top;
      else
        return bad("is a statement at the top of the file");
    } else if (block == Block::top) {
      return bad("is indented outside any class or function");
    } else if (block == Block::class_members || block == Block::method) {
      if (indent == 2) block = starts_with(rest, "def ") ? Block::method : Block::class_members;
      else if (block != Block::method) return bad("is indented past a class member that is no method");
    }
  }
  return std::nullopt;
}

// Code of the archive: a method of a class, a free function, or a signature's default values
struct Code {
  const MethodSource* source = nullptr;
  const ClassSource* owner = nullptr;  // null for a free function
  std::string where;                   // `Class.method` for messages
};

// What one piece of code does, judged once: the code it reaches, and its findings
struct Facts {
  std::vector<Code> next;
  struct Finding {
    std::string name, severity;
    bool runs_code;
    std::string why;
  };
  std::vector<Finding> findings;
};

class LoadTimeJudge {
 public:
  explicit LoadTimeJudge(const CodeMembers& code) {
    for (const auto& [member, text] : code) read_member(member, text);
    for (const auto& [name, cls] : classes_) {
      for (const MethodSource& m : cls.methods) by_method_name_[m.name].push_back({&m, &cls, short_name(name) + "." + m.name});
      for (const auto& [attribute, type] : cls.attributes)
        if (custom_class(type)) custom_attribute_ = type;
    }
  }

  std::vector<LoadTimeFinding> judge() {
    std::vector<LoadTimeFinding> out = problems_;
    // what runs at load: each class's __setstate__, and every signature's default values
    // (LibTorch's compiler evaluates them as it defines the class)
    std::vector<std::pair<Code, std::string>> roots;  // the code, its member
    for (const auto& [name, cls] : classes_) {
      if (const MethodSource* setstate = cls.method("__setstate__"))
        roots.push_back({{setstate, &cls, short_name(name) + ".__setstate__"}, member_of_.at(name)});
      for (const MethodSource& m : cls.methods)
        roots.push_back({{signature_of(m), &cls, short_name(name) + "." + m.name + "'s default arguments"},
                         member_of_.at(name)});
    }
    for (const auto& [name, f] : functions_)
      roots.push_back({{signature_of(f), nullptr, short_name(name) + "'s default arguments"}, member_of_.at(name)});
    std::sort(roots.begin(), roots.end(), [](const auto& a, const auto& b) {
      return std::tie(a.second, a.first.where) < std::tie(b.second, b.first.where);
    });
    for (const auto& [root, member] : roots) walk(root, member, out);
    return out;
  }

 private:
  static std::string short_name(const std::string& qualified) {
    const std::size_t dot = qualified.rfind('.');
    return dot == std::string::npos ? qualified : qualified.substr(dot + 1);
  }

  static bool custom_class(std::string_view type) {
    constexpr std::string_view kPrefix = "__torch__.torch.classes.";
    if (!starts_with(type, kPrefix)) return false;
    return !torch_class_namespace(split_first(type.substr(kPrefix.size())).first);
  }

  void problem(const std::string& member, const std::string& name, const std::string& why) {
    problems_.push_back({member, name, "malformed", false, why});
  }

  void read_member(const std::string& member, const std::string& text) {
    if (const auto why = layout_problem(text)) {
      problem(member, "code not read", "its TorchScript is laid out in a way this reader does not know (" +
                                           *why + "), so what it runs at load is not judged");
      return;
    }
    ClassSources classes;
    FunctionSources functions;
    try {
      // its name from the archive's folder on: `TOP/code/__torch__/a.py` holds `__torch__.a`
      const std::size_t code = starts_with(member, "code/") ? 0 : member.find("/code/") + 1;
      read_class_sources(member.substr(code), text, classes, &functions);
    } catch (const UnsupportedPickle& e) {
      problem(member, "code not read", std::string("its TorchScript could not be read (") + e.what() +
                                           "), so what it runs at load is not judged");
      return;
    }
    // each qualified name once across classes and functions: a second definition is not judged
    const auto adopt = [&](auto& read, auto& kept) {
      for (auto& entry : read) {
        const std::string& name = entry.first;
        if (classes_.count(name) || functions_.count(name)) {
          problem(member, "defined twice", name + " is defined twice in the archive's code, so which runs is not judged");
          continue;
        }
        member_of_[name] = member;
        kept[name] = std::move(entry.second);
      }
    };
    adopt(classes, classes_);
    adopt(functions, functions_);
  }

  // a method's signature as code of its own: the lines its default values are on
  const MethodSource* signature_of(const MethodSource& m) {
    MethodSource& s = signatures_.emplace_back();
    s.name = m.name;
    std::string_view text = m.signature;
    for (std::size_t pos = 0; pos <= text.size();) {
      std::size_t end = text.find('\n', pos);
      if (end == std::string_view::npos) end = text.size();
      s.body.push_back(text.substr(pos, end - pos));
      pos = end + 1;
    }
    // from the parameters' parenthesis on: `def name` is no call
    const std::size_t open = s.body.front().find('(');
    s.body.front().remove_prefix(open == std::string_view::npos ? s.body.front().size() : open);
    return &s;
  }

  // every root's reachable code, each piece judged once; findings named from the root
  void walk(const Code& root, const std::string& member, std::vector<LoadTimeFinding>& out) {
    std::set<const MethodSource*> seen{root.source};
    std::deque<Code> queue{root};
    std::set<std::string> named;
    while (!queue.empty()) {
      const Code at = queue.front();
      queue.pop_front();
      const Facts& facts = facts_of(at);
      for (const Facts::Finding& f : facts.findings) {
        if (!named.insert(f.name).second) continue;
        std::string reason = root.where;
        if (at.source != root.source) reason += " (through " + at.where + ")";
        out.push_back({member, f.name, f.severity, f.runs_code, reason + " " + f.why});
      }
      for (const Code& next : facts.next)
        if (seen.insert(next.source).second) queue.push_back(next);
    }
  }

  const Facts& facts_of(const Code& code) {
    const auto it = facts_.find(code.source);
    if (it != facts_.end()) return it->second;
    Facts& facts = facts_[code.source];
    std::map<std::string_view, std::string> aliases;  // `_0 = self.inner`: _0 is self.inner
    for (const std::string_view line : code.source->body) {
      const std::optional<std::vector<Token>> tokens = tokens_of(line);
      if (!tokens) {
        facts.findings.push_back({"code not read", "malformed", false,
                                  "has a string that does not end on its line, so what follows is not judged"});
        continue;
      }
      judge_line(*tokens, code, aliases, facts);
    }
    return facts;
  }

  void judge_line(const std::vector<Token>& t, const Code& code,
                  std::map<std::string_view, std::string>& aliases, Facts& facts) {
    using K = Token::Kind;
    // `NAME = self.a.b`: an alias the printer makes before calling a method of an attribute
    if (t.size() >= 3 && t[0].kind == K::name && t[1].text == "=" && t[2].text == "self") {
      std::string path = "self";
      std::size_t k = 3;
      for (; k + 1 < t.size() && t[k].kind == K::dot && t[k + 1].kind == K::name; k += 2)
        path += "." + std::string(t[k + 1].text);
      if (k == t.size()) aliases[t[0].text] = path;
    }
    for (std::size_t i = 0; i < t.size(); ++i) {
      if (t[i].kind == K::name && t[i].text == "while")
        add(facts, "while", "not-allowed", true, "runs a while loop, which need not end: more than copying state at load");
      if (t[i].kind != K::open || i == 0) continue;
      const Token& before = t[i - 1];
      if (before.kind == K::name && one_of(before.text, kKeywords)) continue;  // `if (x)`
      if (before.kind == K::close || before.kind == K::string || before.text == "]") {
        add(facts, "call of an expression", "not-allowed", false,
            "calls what an expression gives (`)(`, `](`), which this reader cannot name");
        continue;
      }
      if (before.kind != K::name) continue;  // a parenthesised expression, a tuple
      // the dotted callee before the parenthesis, and its receiver where one is in parentheses
      std::size_t j = i - 1;
      while (j >= 2 && t[j - 1].kind == K::dot && t[j - 2].kind == K::name) j -= 2;
      std::string callee;
      for (std::size_t k = j; k < i; ++k) callee += t[k].text;
      if (j >= 2 && t[j - 1].kind == K::dot) {  // `(RECEIVER).method(`, `x[0].method(`
        std::string receiver = "<value>";
        if (t[j - 2].kind == K::close) {
          long depth = 0;
          std::size_t open = j - 2;
          for (std::size_t k = j - 1; k-- > 0;) {
            if (t[k].kind == K::close) ++depth;
            if (t[k].kind == K::open && --depth == 0) {
              open = k;
              break;
            }
          }
          std::string inner;
          bool path = open + 1 < j - 2;
          for (std::size_t k = open + 1; k < j - 2; ++k) {
            path = path && (t[k].kind == K::name || t[k].kind == K::dot);
            inner += t[k].text;
          }
          if (path) receiver = inner;
        }
        callee = receiver + "." + callee;
      }
      // a local that aliases a path of self
      const auto [head, rest] = split_first(callee);
      if (const auto a = aliases.find(head); a != aliases.end())
        callee = a->second + (rest.empty() ? "" : "." + std::string(rest));
      judge_call(callee, code, facts);
    }
  }

  static void add(Facts& facts, const std::string& name, const std::string& severity, bool runs_code,
                  const std::string& why) {
    facts.findings.push_back({name, severity, runs_code, why});
  }

  // What a call does; the archive's code it reaches goes to facts.next
  void judge_call(const std::string& call, const Code& at, Facts& facts) {
    const auto [head, rest] = split_first(call);
    if (head == "self" && at.owner) {
      resolve_self_path(rest, *at.owner, at, facts);
      return;
    }
    if (head == "ops" || starts_with(call, "torch.ops.")) {
      const std::string_view ops = head == "ops" ? rest : std::string_view(call).substr(10);
      const auto [ns, op] = split_first(ops);
      if (!torch_operator_namespace(ns))
        add(facts, call, "not-allowed", true,
            "calls " + call + ", an operator of the namespace `" + std::string(ns) +
                "`, which is no part of torch: a custom operator library's code runs at load");
      else if (file_operator(op))
        add(facts, call, "dangerous", true, "calls " + call + ", which reaches a file when LibTorch loads the archive");
      else if (ns == "prim" && op == "Print")
        add(facts, call, "not-allowed", true, "prints at load, onto the loading program's output: more than copying state");
      return;
    }
    if (starts_with(call, "torch.classes.") || starts_with(call, "__torch__.torch.classes.")) {
      if (custom_class(starts_with(call, "torch.") ? "__torch__." + call : call))
        add(facts, call, "not-allowed", true,
            "uses " + call + ", a C++ class of a namespace outside torch's: a custom library's code runs at load");
      return;
    }
    if (head == "torch") {
      if (file_operator(rest))
        add(facts, call, "dangerous", true, "calls " + call + ", which reaches a file when LibTorch loads the archive");
      return;
    }
    if (head == "math") return;
    if (head == "__torch__") {
      if (const auto f = functions_.find(call); f != functions_.end()) {
        facts.next.push_back({&f->second, nullptr, short_name(call)});
        return;
      }
      const std::size_t dot = call.rfind('.');
      const std::string owner = call.substr(0, dot);
      const std::string cls = classes_.count(call) ? call : owner;
      if (classes_.count(cls)) {  // an object of the archive's classes made: its __init__ runs
        if (const MethodSource* init = classes_.at(cls).method("__init__"))
          facts.next.push_back({init, &classes_.at(cls), short_name(cls) + ".__init__"});
        return;
      }
      add(facts, call, "not-allowed", false, "calls " + call + ", which the archive's code does not define");
      return;
    }
    if (rest.empty()) {
      if (call == "print")
        add(facts, call, "not-allowed", true, "prints at load, onto the loading program's output: more than copying state");
      else if (!one_of(std::string_view(call), kBuiltins))
        add(facts, call, "not-allowed", false, "calls " + call + ", which this reader does not know");
      return;
    }
    // a method of a value: every archive class defining a method of that name may be it
    const std::string method = call.substr(call.rfind('.') + 1);
    if (const auto it = by_method_name_.find(method); it != by_method_name_.end())
      facts.next.insert(facts.next.end(), it->second.begin(), it->second.end());
    else if (!custom_attribute_.empty())
      add(facts, "untyped call", "not-allowed", false,
          "calls " + method + " on a value this reader cannot type, in an archive holding objects of " +
              custom_attribute_ + " (a custom library's class)");
  }

  // `self.a.b.method`: each link through the declared attribute types, then the method
  void resolve_self_path(std::string_view path, const ClassSource& owner, const Code& at, Facts& facts) {
    const ClassSource* cls = &owner;
    std::string type = "self";
    while (true) {
      const auto [first, more] = split_first(path);
      if (more.empty()) {
        if (const MethodSource* m = cls->method(first))
          facts.next.push_back({m, cls, short_name(type == "self" ? at.where.substr(0, at.where.find('.')) : type) + "." + m->name});
        return;
      }
      const auto attribute = std::find_if(cls->attributes.begin(), cls->attributes.end(),
                                          [name = first](const auto& a) { return a.first == name; });
      if (attribute == cls->attributes.end()) return;  // a parameter, a constant: torch's own
      type = attribute->second;
      if (custom_class(type)) {
        add(facts, type, "not-allowed", true,
            "calls a method of " + type + ", a C++ class of a namespace outside torch's: a custom library's code runs at load");
        return;
      }
      const auto next = classes_.find(type);
      if (next == classes_.end()) return;  // a Tensor, a list, torch's own classes
      cls = &next->second;
      path = more;
    }
  }

  static bool file_operator(std::string_view op) { return one_of(op, kFileOperators); }

  ClassSources classes_;
  FunctionSources functions_;
  std::unordered_map<std::string, std::string> member_of_;
  std::unordered_map<std::string, std::vector<Code>> by_method_name_;
  std::string custom_attribute_;  // a declared attribute of a custom C++ class, if any
  std::deque<MethodSource> signatures_;
  std::unordered_map<const MethodSource*, Facts> facts_;
  std::vector<LoadTimeFinding> problems_;
};

}  // namespace

bool torch_operator_namespace(std::string_view ns) {
  // the namespaces LibTorch itself registers operators in
  static constexpr std::array<std::string_view, 19> kTorch{
      "aten", "prim", "prims", "quantized", "_quantized", "quantized_decomposed", "prepacked",
      "sparse", "mkldnn", "mkldnn_prepacked", "onednn", "profiler", "cuda", "rngprims",
      "_c10d_functional", "c10d_functional", "c10d", "_dtensor", "_caffe2"};
  return one_of(ns, kTorch);
}

bool torch_class_namespace(std::string_view ns) {
  // the namespaces of the C++ classes LibTorch itself registers (torch.classes.*)
  static constexpr std::array<std::string_view, 11> kTorch{
      "quantized", "rnn", "xnnpack", "sparse", "mkldnn", "onednn", "c10d", "dist_c10d",
      "dist_rpc", "cuda", "profiling"};
  return one_of(ns, kTorch);
}

std::vector<LoadTimeFinding> judge_load_time_code(const CodeMembers& code) {
  return LoadTimeJudge(code).judge();
}

}  // namespace vin::diagnostics
