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

}  // namespace vin::diagnostics
