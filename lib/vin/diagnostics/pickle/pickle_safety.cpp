#include "vin/diagnostics/pickle/pickle_safety.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <unordered_map>
#include <vector>

#include "vin/diagnostics/pickle/pickle_opcodes.h"
#include "vin/diagnostics/pickle/pickle_reader.h"

namespace vin::diagnostics {
namespace {

// What the scan knows of one value: how deeply it nests, how many values it reaches with shared
// containers followed at every reference, the deepest `[` nesting of a string inside it, and
// whether it is the global torch.jit._pickle.restore_type_tag.
struct Shape {
  std::size_t nesting = 1;
  std::size_t expanded = 1;
  std::size_t type_depth = 0;
  bool restore_type_tag = false;
  std::string_view text;  // a string's or bytes' text (STACK_GLOBAL's module and name)
};

std::size_t bracket_depth(std::string_view text) {
  std::size_t depth = 0, deepest = 0;
  for (char c : text) {
    if (c == '[')
      deepest = std::max(deepest, ++depth);
    else if (c == ']' && depth > 0)
      --depth;
  }
  return deepest;
}

std::size_t saturating_add(std::size_t a, std::size_t b) {
  std::size_t sum = 0;
  return __builtin_add_overflow(a, b, &sum) ? SIZE_MAX : sum;
}

// `container` after `items` went into it (or a new value made of them, when it starts as a leaf
// made for them)
void absorb(Shape& container, const Shape* items, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) {
    container.nesting = std::max(container.nesting, items[i].nesting + 1);
    container.expanded = saturating_add(container.expanded, items[i].expanded);
    container.type_depth = std::max(container.type_depth, items[i].type_depth);
  }
}

// The value a push opcode that ends at `pos` makes (a GLOBAL met by `foreign`).
Shape leaf(std::string_view p, std::size_t pos, const PickleOpcode& code,
           ForeignGlobals& foreign) {
  Shape out;
  if (code.counted && !is(code, Op::LONG1) && !is(code, Op::LONG4)) {  // strings, bytes
    out.text = p.substr(pos - code.value, code.value);
    out.type_depth = bracket_depth(out.text);
  }
  if (is(code, Op::GLOBAL)) {  // "module\nname\n" between the opcode and pos
    const std::string_view lines = p.substr(code.at + 1, pos - code.at - 2);
    const std::size_t nl = lines.find('\n');
    out.restore_type_tag = lines == "torch.jit._pickle\nrestore_type_tag";
    foreign.meet(global_name(lines.substr(0, nl), lines.substr(nl + 1)));
  }
  return out;
}

// pickle_problem's scan; `foreign` gets the globals met, which the problem is said after
std::optional<std::string> scan(std::string_view p, const PickleLimits& limits,
                                ForeignGlobals& foreign) {
  std::vector<Shape> stack;
  std::vector<std::size_t> marks;  // the stack size at each open MARK
  std::unordered_map<std::uint64_t, Shape> memo;
  std::size_t values = 0;
  std::size_t pos = 0;
  PickleOpcode code;
  const auto problem_at = [&](const std::string& what) {
    char op_text[8];
    std::snprintf(op_text, sizeof op_text, "0x%02x", code.op);
    return "opcode " + std::string(op_text) + " at byte " + std::to_string(code.at) + " " + what;
  };
  // values an opcode may take: those above the last MARK (as in Python's unpickler)
  const auto available = [&] { return stack.size() - (marks.empty() ? 0 : marks.back()); };
  const auto needs = [&](std::size_t n) {
    return problem_at("needs " + std::to_string(n) + " value(s) on the stack, finds " +
                      std::to_string(available()));
  };
  // the value just made or changed, against the limits
  const auto check = [&](const Shape& s) -> std::optional<std::string> {
    if (s.nesting > limits.max_nesting)
      return problem_at("nests values more than " + std::to_string(limits.max_nesting) + " deep");
    if (s.expanded > limits.max_expanded)
      return problem_at("makes shared containers that expand to more than " +
                        std::to_string(limits.max_expanded) + " values");
    return std::nullopt;
  };
  while (pos < p.size()) {
    switch (next_opcode(p, pos, code)) {
      case OpcodeRead::ok:
        break;
      case OpcodeRead::too_long:
        return "a length of " + std::to_string(code.value) + " bytes at byte " +
               std::to_string(code.at) + " runs past the end of the pickle";
      // LibTorch reports these without allocating, and refuses opcodes it does not know; but
      // after a global the reader does not rebuild they are refused here, naming the global
      case OpcodeRead::truncated:
        if (foreign.empty()) return std::nullopt;
        return "the pickle ends inside the opcode at byte " + std::to_string(code.at);
      case OpcodeRead::unknown:
        if (foreign.empty()) return std::nullopt;
        return problem_at("is no pickle opcode");
    }
    const StackEffect effect = stack_effect(code.op);
    using K = StackEffect::Kind;
    if (effect.kind != K::none && effect.kind != K::mark && ++values > limits.max_values)
      return problem_at("makes more than " + std::to_string(limits.max_values) + " values");
    switch (effect.kind) {
      case K::none:
        break;
      case K::mark:
        marks.push_back(stack.size());
        break;
      case K::stop:
        if (available() < 1) return needs(1);
        // LibTorch's unpickler takes the last value; the reader refuses more than one, which
        // after a foreign global is said here, naming it
        if (!foreign.empty() && (stack.size() != 1 || !marks.empty()))
          return problem_at("ends the pickle with " + std::to_string(stack.size()) +
                            " values on the stack, not one");
        return std::nullopt;
      case K::push:
        stack.push_back(leaf(p, pos, code, foreign));
        break;
      case K::memo_put:
        // a pickler numbers its memo entries from 0, one per PUT
        if (!is(code, Op::MEMOIZE) && code.value > p.size())
          return "memo index " + std::to_string(code.value) + " at byte " +
                 std::to_string(code.at) + " is larger than a pickle of " +
                 std::to_string(p.size()) + " bytes can use";
        if (available() < 1) return needs(1);
        memo[is(code, Op::MEMOIZE) ? memo.size() : code.value] = stack.back();
        break;
      case K::memo_get: {
        const auto it = memo.find(code.value);
        if (it == memo.end())
          return problem_at("reads memo entry " + std::to_string(code.value) +
                            ", which no PUT made");
        stack.push_back(it->second);
        break;
      }
      case K::build: {
        if (available() < effect.takes) return needs(effect.takes);
        const Shape* taken = stack.data() + stack.size() - effect.takes;
        if (is(code, Op::STACK_GLOBAL) && !taken[0].text.empty() && !taken[1].text.empty())
          foreign.meet(global_name(taken[0].text, taken[1].text));
        // restore_type_tag(value, "List[...]"): LibTorch parses the type string recursively
        if (is(code, Op::REDUCE) && taken[0].restore_type_tag &&
            taken[1].type_depth > limits.max_type_depth)
          return problem_at("gives restore_type_tag a type nested more than " +
                            std::to_string(limits.max_type_depth) + " deep");
        Shape made;
        absorb(made, taken, effect.takes);
        stack.resize(stack.size() - effect.takes);
        stack.push_back(made);
        if (auto problem = check(made)) return problem;
        break;
      }
      case K::collect:
      case K::extend:
      case K::pop_mark: {
        if (marks.empty()) return problem_at("needs a MARK, and none is open");
        const std::size_t at = marks.back();
        marks.pop_back();
        Shape made;
        absorb(made, stack.data() + at, stack.size() - at);
        stack.resize(at);
        if (effect.kind == K::pop_mark) break;
        if (effect.kind == K::collect) {
          stack.push_back(made);
        } else {
          if (available() < 1) return needs(1);
          Shape& container = stack.back();
          container.nesting = std::max(container.nesting, made.nesting);
          container.expanded = saturating_add(container.expanded, made.expanded - 1);
          container.type_depth = std::max(container.type_depth, made.type_depth);
        }
        if (auto problem = check(stack.back())) return problem;
        break;
      }
      case K::add: {
        if (available() < effect.takes + 1) return needs(effect.takes + 1);
        Shape& container = stack[stack.size() - effect.takes - 1];
        absorb(container, stack.data() + stack.size() - effect.takes, effect.takes);
        stack.resize(stack.size() - effect.takes);
        if (auto problem = check(stack.back())) return problem;
        break;
      }
      case K::pop:
        if (available() < 1) return needs(1);
        stack.pop_back();
        break;
      case K::dup:
        if (available() < 1) return needs(1);
        stack.push_back(stack.back());
        break;
    }
  }
  if (!foreign.empty()) return std::string("the pickle ends without a STOP");
  return std::nullopt;
}

}  // namespace

std::optional<std::string> pickle_problem(std::string_view p, const PickleLimits& limits) {
  // what the pickle imports is named before a problem found after it: a refusal that only
  // says "bad STOP" would hide posix.system
  ForeignGlobals foreign;
  const auto problem = scan(p, limits, foreign);
  if (!problem) return std::nullopt;
  return foreign.before(*problem);
}

}  // namespace vin::diagnostics
