#include "vin/diagnostics/scan/load_time_code.h"

#include <algorithm>
#include <array>
#include <deque>
#include <set>
#include <unordered_map>

#include "vin/diagnostics/pickle/pickle_reader.h"
#include "vin/diagnostics/torchscript/class_source.h"

namespace vin::diagnostics {
namespace {

bool starts_with(std::string_view text, std::string_view prefix) {
  return text.substr(0, prefix.size()) == prefix;
}

// The first component of a dotted name, and the rest (empty when there is no dot)
std::pair<std::string_view, std::string_view> split_first(std::string_view dotted) {
  const std::size_t dot = dotted.find('.');
  if (dot == std::string_view::npos) return {dotted, {}};
  return {dotted.substr(0, dot), dotted.substr(dot + 1)};
}

// torch's operators that read or write files: torch.save and torch.from_file in TorchScript
constexpr std::array<std::string_view, 3> kFileOperators{"save", "load", "from_file"};

bool file_operator(std::string_view op) {
  return std::find(kFileOperators.begin(), kFileOperators.end(), op) != kFileOperators.end();
}

// One call on a line of TorchScript: the callee as a dotted name, with its receiver written as
// `self`, `self.NAME` or `<value>` where the source puts it in parentheses (`(self).f(`)
std::vector<std::string> calls_on_line(std::string_view line) {
  std::vector<std::string> calls;
  SourceScanner scanner;
  for (std::size_t p = 0; p < line.size(); ++p) {
    if (scanner.feed(line[p]) != SourceScanner::Role::open || line[p] != '(') continue;
    std::size_t j = p;
    while (j > 0 && (is_identifier_char(line[j - 1]) || line[j - 1] == '.')) --j;
    std::string_view dotted = line.substr(j, p - j);
    if (dotted.empty()) continue;  // a parenthesised expression, a tuple
    if (dotted.front() != '.') {
      calls.emplace_back(dotted);
      continue;
    }
    // `(RECEIVER).method(`, `x[0].method(`: the receiver in parentheses is read; any other is a value
    std::string receiver = "<value>";
    if (j > 0 && line[j - 1] == ')') {
      long depth = 0;
      std::size_t open = j - 1;
      for (std::size_t k = j; k-- > 0;) {
        if (line[k] == ')') ++depth;
        if (line[k] == '(' && --depth == 0) {
          open = k;
          break;
        }
      }
      const std::string_view inner = line.substr(open + 1, j - 1 - open - 1);
      const bool self_path = inner == "self" ||
                             (starts_with(inner, "self.") &&
                              std::all_of(inner.begin() + 5, inner.end(),
                                          [](char c) { return is_identifier_char(c) || c == '.'; }));
      if (self_path) receiver = std::string(inner);
    }
    calls.push_back(receiver + std::string(dotted));
  }
  return calls;
}

// Code of the archive reached from a __setstate__: a method of a class, or a free function
struct Reached {
  const MethodSource* code;
  const ClassSource* owner;  // null for a free function
  std::string where;         // `Class.method` for messages
};

class LoadTimeJudge {
 public:
  explicit LoadTimeJudge(const CodeMembers& code) {
    for (const auto& [member, text] : code) {
      const std::size_t at = member.find("code/");
      ClassSources classes;
      try {
        read_class_sources(member.substr(at), text, classes, &functions_);
      } catch (const UnsupportedPickle& e) {
        unreadable_.push_back({member, "code not read", "malformed", false,
                               std::string("its TorchScript could not be read (") + e.what() +
                                   "), so what it runs at load is not judged"});
        continue;
      }
      for (auto& [name, cls] : classes) {
        member_of_[name] = member;
        classes_[name] = std::move(cls);
      }
    }
    for (const auto& [name, cls] : classes_)
      for (const MethodSource& m : cls.methods) by_method_name_[m.name].push_back({&m, &cls, name + "." + m.name});
  }

  std::vector<LoadTimeFinding> judge() {
    std::vector<LoadTimeFinding> out = unreadable_;
    std::vector<std::string> names;
    for (const auto& [name, cls] : classes_)
      if (cls.method("__setstate__")) names.push_back(name);
    std::sort(names.begin(), names.end());  // findings in a stable order
    for (const std::string& name : names) {
      const ClassSource& cls = classes_.at(name);
      record_ = member_of_.at(name);
      origin_ = short_name(name) + ".__setstate__";
      walk({cls.method("__setstate__"), &cls, origin_});
      for (LoadTimeFinding& f : found_) out.push_back(std::move(f));
      found_.clear();
    }
    return out;
  }

 private:
  static std::string short_name(const std::string& qualified) {
    const std::size_t dot = qualified.rfind('.');
    return dot == std::string::npos ? qualified : qualified.substr(dot + 1);
  }

  void walk(Reached start) {
    std::set<const MethodSource*> seen{start.code};
    std::deque<Reached> queue{start};
    while (!queue.empty()) {
      const Reached at = queue.front();
      queue.pop_front();
      for (const std::string_view line : at.code->body) {
        const std::size_t first = line.find_first_not_of(' ');
        if (first != std::string_view::npos && starts_with(line.substr(first), "while "))
          find("while", "not-allowed", true,
               "runs a while loop, which need not end: more than copying state at load", at);
        for (const std::string& call : calls_on_line(line))
          for (Reached next : judge_call(call, at))
            if (seen.insert(next.code).second) queue.push_back(std::move(next));
      }
    }
  }

  void find(const std::string& name, const std::string& severity, bool runs_code,
            const std::string& why, const Reached& at) {
    for (const LoadTimeFinding& f : found_)
      if (f.name == name) return;
    std::string reason = origin_;
    if (at.where != origin_) reason += " (through " + at.where + ")";
    found_.push_back({record_, name, severity, runs_code, reason + " " + why});
  }

  // What a call does; the archive's code it reaches, to be walked in turn
  std::vector<Reached> judge_call(const std::string& call, const Reached& at) {
    std::vector<Reached> next;
    const auto [head, rest] = split_first(call);
    if (head == "self" && at.owner) {
      const auto [first, more] = split_first(rest);
      if (more.empty()) {  // a method of this module
        if (const MethodSource* m = at.owner->method(first)) next.push_back({m, at.owner, at.where.substr(0, at.where.find('.') + 1) + m->name});
        return next;
      }
      // `self.NAME.method`: a method of the attribute's class
      for (const auto& [attribute, type] : at.owner->attributes)
        if (attribute == first) reach_type(type, more, at, next);
      return next;
    }
    if (head == "ops" || starts_with(call, "torch.ops.")) {
      const std::string_view ops = head == "ops" ? rest : std::string_view(call).substr(10);
      const auto [ns, op] = split_first(ops);
      operator_call(call, ns, op, at);
      return next;
    }
    if (starts_with(call, "torch.classes.") || starts_with(call, "__torch__.torch.classes.")) {
      custom_class(call, at);
      return next;
    }
    if (head == "torch") {
      if (rest.find('.') == std::string_view::npos && file_operator(rest))
        find(call, "dangerous", true, "calls " + call + ", which reaches a file when LibTorch loads the archive", at);
      return next;
    }
    if (head == "__torch__") {
      if (const auto f = functions_.find(call); f != functions_.end()) {
        next.push_back({&f->second, nullptr, short_name(call)});
        return next;
      }
      const std::size_t dot = call.rfind('.');
      const std::string owner = dot == std::string::npos ? call : call.substr(0, dot);
      if (classes_.count(call) || classes_.count(owner)) {
        // constructing an object of the archive's classes: its __init__ runs
        const std::string cls = classes_.count(call) ? call : owner;
        if (const MethodSource* init = classes_.at(cls).method("__init__"))
          next.push_back({init, &classes_.at(cls), short_name(cls) + ".__init__"});
        return next;
      }
      find(call, "not-allowed", false, "calls " + call + ", which the archive's code does not define", at);
      return next;
    }
    if (call == "print")
      find(call, "not-allowed", true, "prints at load, onto the loading program's output: more "
           "than copying state", at);
    if (rest.empty()) return next;  // a builtin: int(), len(), annotate(), ...
    // a method of a value: every class of the archive defining a method of that name may be it
    const std::size_t dot = call.rfind('.');
    const std::string method = call.substr(dot + 1);
    if (const auto it = by_method_name_.find(method); it != by_method_name_.end())
      next.insert(next.end(), it->second.begin(), it->second.end());
    return next;
  }

  void reach_type(const std::string& type, std::string_view method, const Reached& at,
                  std::vector<Reached>& next) {
    if (starts_with(type, "__torch__.torch.classes.")) {
      custom_class(type, at);
      return;
    }
    const auto cls = classes_.find(type);
    if (cls == classes_.end()) return;  // torch's own (a Tensor, a list): nothing of the archive's
    const auto [name, more] = split_first(method);
    if (const MethodSource* m = cls->second.method(name))
      next.push_back({m, &cls->second, short_name(type) + "." + m->name});
  }

  void operator_call(const std::string& call, std::string_view ns, std::string_view op,
                     const Reached& at) {
    if (!torch_operator_namespace(ns))
      find(call, "not-allowed", true,
           "calls " + call + ", an operator of the namespace `" + std::string(ns) +
               "`, which is no part of torch: a custom operator library's code runs at load", at);
    else if (file_operator(op))
      find(call, "dangerous", true, "calls " + call + ", which reaches a file when LibTorch loads the archive", at);
  }

  void custom_class(const std::string& name, const Reached& at) {
    const std::string_view rest = std::string_view(name).substr(name.find("classes.") + 8);
    const std::string_view ns = split_first(rest).first;
    if (!torch_class_namespace(ns))
      find(name, "not-allowed", true,
           "uses " + name + ", a C++ class of the namespace `" + std::string(ns) +
               "`, which is no part of torch: a custom library's code runs at load", at);
  }

  ClassSources classes_;
  FunctionSources functions_;
  std::unordered_map<std::string, std::string> member_of_;
  std::unordered_map<std::string, std::vector<Reached>> by_method_name_;
  std::vector<LoadTimeFinding> unreadable_, found_;
  std::string record_, origin_;
};

}  // namespace

bool torch_operator_namespace(std::string_view ns) {
  // the namespaces LibTorch itself registers operators in
  static constexpr std::array<std::string_view, 19> kTorch{
      "aten", "prim", "prims", "quantized", "_quantized", "quantized_decomposed", "prepacked",
      "sparse", "mkldnn", "mkldnn_prepacked", "onednn", "profiler", "cuda", "rngprims",
      "_c10d_functional", "c10d_functional", "c10d", "_dtensor", "_caffe2"};
  return std::find(kTorch.begin(), kTorch.end(), ns) != kTorch.end();
}

bool torch_class_namespace(std::string_view ns) {
  // the namespaces of the C++ classes LibTorch itself registers (torch.classes.*)
  static constexpr std::array<std::string_view, 11> kTorch{
      "quantized", "rnn", "xnnpack", "sparse", "mkldnn", "onednn", "c10d", "dist_c10d",
      "dist_rpc", "cuda", "profiling"};
  return std::find(kTorch.begin(), kTorch.end(), ns) != kTorch.end();
}

std::vector<LoadTimeFinding> judge_load_time_code(const CodeMembers& code) {
  return LoadTimeJudge(code).judge();
}

}  // namespace vin::diagnostics
