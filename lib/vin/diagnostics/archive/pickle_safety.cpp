#include "vin/diagnostics/archive/pickle_safety.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <unordered_map>
#include <vector>

#include "vin/diagnostics/archive/pickle_opcodes.h"

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

}  // namespace

std::optional<std::string> pickle_problem(std::string_view p, const PickleLimits& limits) {
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
      case OpcodeRead::truncated:  // LibTorch reports these without allocating
      case OpcodeRead::unknown:    // LibTorch refuses opcodes it does not know either
        return std::nullopt;
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
        return std::nullopt;
      case K::push: {
        Shape leaf;
        if (code.counted && !is(code, Op::LONG1) && !is(code, Op::LONG4))  // strings, bytes
          leaf.type_depth = bracket_depth(p.substr(pos - code.value, code.value));
        if (is(code, Op::GLOBAL))
          leaf.restore_type_tag =
              p.substr(code.at + 1, pos - code.at - 1) == "torch.jit._pickle\nrestore_type_tag\n";
        stack.push_back(leaf);
        break;
      }
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
  return std::nullopt;
}

}  // namespace vin::diagnostics
