#include "vin/diagnostics/pickle_rewrite.h"

#include <cstdint>
#include <cstdio>
#include <vector>

#include "vin/diagnostics/pickle_opcodes.h"

namespace vin::diagnostics {
namespace {

// One stack entry: the offset of the first opcode that produced it (a MARK is an entry too).
struct Entry {
  std::size_t start;
  bool mark;
};

}  // namespace

std::optional<std::string> rewrite_single_item_opcodes(std::string_view p) {
  std::vector<Entry> stack;
  std::vector<std::size_t> mark_at;     // offsets that get a MARK inserted before them
  std::vector<std::size_t> rewrite_at;  // offsets of SETITEM/APPEND opcodes
  auto pop = [&]() -> std::optional<Entry> {
    if (stack.empty()) return std::nullopt;
    Entry e = stack.back();
    stack.pop_back();
    return e;
  };
  // pops up to and including the topmost MARK; returns the MARK's offset
  auto pop_to_mark = [&]() -> std::optional<std::size_t> {
    while (!stack.empty()) {
      const Entry e = stack.back();
      stack.pop_back();
      if (e.mark) return e.start;
    }
    return std::nullopt;
  };
  // an opcode that pops `n` entries and pushes one that starts where the first popped began
  auto combine = [&](std::size_t n, std::size_t at) -> bool {
    std::size_t start = at;
    for (std::size_t i = 0; i < n; ++i) {
      auto e = pop();
      if (!e || e->mark) return false;
      start = e->start;
    }
    stack.push_back({start, false});
    return true;
  };
  std::size_t pos = 0;
  PickleOpcode code;
  while (pos < p.size()) {
    // a stream this scanner cannot follow is left alone (for LibTorch to read or refuse)
    if (next_opcode(p, pos, code) != OpcodeRead::ok) return std::nullopt;
    const std::size_t at = code.at;
    bool ok = true;
    switch (code.op) {
      case 0x80:  // PROTO
      case 'q':   // BINPUT
      case 'r':   // LONG_BINPUT
      case 0x94:  // MEMOIZE
        break;
      case '.':  // STOP
        pos = p.size();
        break;
      case '(':  // MARK
        stack.push_back({at, true});
        break;
      case 'K':
      case 'M':
      case 'J':
      case 'G':  // BININT1/2, BININT, BINFLOAT
      case 0x8a:
      case 0x8b:  // LONG1, LONG4
      case 'X':
      case 'T':
      case 'B':
      case 0x8c:
      case 'U':
      case 'C':  // strings and bytes
      case 'N':
      case 0x88:
      case 0x89:  // NONE, NEWTRUE, NEWFALSE
      case ')':
      case ']':
      case '}':  // EMPTY_TUPLE/LIST/DICT
      case 'h':
      case 'j':  // BINGET, LONG_BINGET
      case 'c':  // GLOBAL
        stack.push_back({at, false});
        break;
      case 't':
      case 'l':
      case 'd': {  // TUPLE, LIST, DICT
        auto mark = pop_to_mark();
        if (!mark)
          ok = false;
        else
          stack.push_back({*mark, false});
        break;
      }
      case 0x85:
        ok = combine(1, at);
        break;  // TUPLE1
      case 0x86:
        ok = combine(2, at);
        break;  // TUPLE2
      case 0x87:
        ok = combine(3, at);
        break;  // TUPLE3
      case 'R':
      case 0x81:
        ok = combine(2, at);
        break;  // REDUCE, NEWOBJ
      case 'Q':
        ok = combine(1, at);
        break;  // BINPERSID
      case 'b':
        ok = pop().has_value();
        break;  // BUILD: pops the state
      case 'u':
      case 'e':
        ok = pop_to_mark().has_value();
        break;     // SETITEMS, APPENDS
      case 's': {  // SETITEM: dict key value
        auto value = pop();
        auto key = pop();
        if (!value || !key || value->mark || key->mark)
          ok = false;
        else {
          mark_at.push_back(key->start);
          rewrite_at.push_back(at);
        }
        break;
      }
      case 'a': {  // APPEND: list value
        auto value = pop();
        if (!value || value->mark)
          ok = false;
        else {
          mark_at.push_back(value->start);
          rewrite_at.push_back(at);
        }
        break;
      }
      default:
        ok = false;  // an opcode outside what torch.save writes: leave the stream alone
    }
    if (!ok) return std::nullopt;
  }
  if (rewrite_at.empty()) return std::nullopt;

  std::vector<unsigned> marks_before(p.size() + 1, 0);
  for (auto m : mark_at) ++marks_before[m];
  std::vector<bool> rewrite(p.size(), false);
  for (auto r : rewrite_at) rewrite[r] = true;
  std::string out;
  out.reserve(p.size() + mark_at.size());
  for (std::size_t i = 0; i < p.size(); ++i) {
    out.append(marks_before[i], '(');
    char c = p[i];
    if (rewrite[i]) c = c == 's' ? 'u' : 'e';
    out.push_back(c);
  }
  return out;
}

std::optional<std::string> pickle_problem(std::string_view p) {
  std::size_t depth = 0;           // values on the stack
  std::vector<std::size_t> marks;  // the depth at each open MARK
  std::size_t pos = 0;
  PickleOpcode code;
  char op_text[8];
  const auto problem_at = [&](const std::string& what) {
    std::snprintf(op_text, sizeof op_text, "0x%02x", code.op);
    return "opcode " + std::string(op_text) + " at byte " + std::to_string(code.at) + " " + what;
  };
  // values an opcode may take: those above the last MARK (as in Python's unpickler)
  const auto available = [&] { return depth - (marks.empty() ? 0 : marks.back()); };
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
    // a pickler numbers its memo entries from 0, one per PUT
    if ((code.op == 'q' || code.op == 'r') && code.value > p.size())
      return "memo index " + std::to_string(code.value) + " at byte " + std::to_string(code.at) +
             " is larger than a pickle of " + std::to_string(p.size()) + " bytes can use";
    // the stack effect: `takes` values (above the last MARK), or everything down to the last
    // MARK (and then `takes` more below it), then `pushes`
    std::size_t takes = 0, pushes = 0;
    bool to_mark = false;
    switch (code.op) {
      case '(':
        marks.push_back(depth);
        continue;
      case 0x80:
      case 0x95:  // PROTO, FRAME
        continue;
      case '.':
      case 'q':
      case 'r':
      case 0x94:
      case 'Q':
      case '2':  // need a value, keep it
        takes = pushes = 1;
        if (code.op == '2') pushes = 2;  // DUP
        break;
      case 't':
      case 'l':
      case 'd':
      case 0x91:  // TUPLE, LIST, DICT, FROZENSET
        to_mark = true;
        pushes = 1;
        break;
      case '1':  // POP_MARK
        to_mark = true;
        break;
      case 'u':
      case 'e':
      case 0x90:  // SETITEMS, APPENDS, ADDITEMS: into the container below
        to_mark = true;
        takes = pushes = 1;
        break;
      case 0x85:
      case 0x86:
      case 0x87:  // TUPLE1..3
        takes = code.op - 0x84u;
        pushes = 1;
        break;
      case 'R':
      case 0x81:
      case 0x93:
      case 'b':  // REDUCE, NEWOBJ, STACK_GLOBAL, BUILD
        takes = 2;
        pushes = 1;
        break;
      case 0x92:  // NEWOBJ_EX
        takes = 3;
        pushes = 1;
        break;
      case 's':  // SETITEM
        takes = 3;
        pushes = 1;
        break;
      case 'a':  // APPEND
        takes = 2;
        pushes = 1;
        break;
      case '0':  // POP
        takes = 1;
        break;
      default:  // everything else pushes one value
        pushes = 1;
    }
    if (to_mark) {
      if (marks.empty()) return problem_at("needs a MARK, and none is open");
      depth = marks.back();
      marks.pop_back();
    }
    // LibTorch's unpickler pops without looking: a short stack corrupts its memory
    if (available() < takes)
      return problem_at("needs " + std::to_string(takes) + " value(s) on the stack, finds " +
                        std::to_string(available()));
    depth = depth - takes + pushes;
    if (code.op == '.') return std::nullopt;  // STOP
  }
  return std::nullopt;
}

}  // namespace vin::diagnostics
