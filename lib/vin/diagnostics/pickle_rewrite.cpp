#include "vin/diagnostics/pickle_rewrite.h"

#include <cstdint>
#include <vector>

namespace vin::diagnostics {
namespace {

// One stack entry: the offset of the first opcode that produced it (a MARK is an entry too).
struct Entry {
  std::size_t start;
  bool mark;
};

std::uint32_t little_endian(std::string_view data, std::size_t pos, std::size_t bytes) {
  std::uint32_t v = 0;
  for (std::size_t i = 0; i < bytes; ++i)
    v |= static_cast<std::uint32_t>(static_cast<unsigned char>(data[pos + i])) << (8 * i);
  return v;
}

}  // namespace

std::optional<std::string> rewrite_single_item_opcodes(std::string_view p) {
  std::vector<Entry> stack;
  std::vector<std::size_t> mark_at;     // offsets that get a MARK inserted before them
  std::vector<std::size_t> rewrite_at;  // offsets of SETITEM/APPEND opcodes
  std::size_t pos = 0;
  auto need = [&](std::size_t n) { return pos + n <= p.size(); };
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
  while (pos < p.size()) {
    const std::size_t at = pos;
    const unsigned char op = static_cast<unsigned char>(p[pos++]);
    auto push_after = [&](std::size_t arg_bytes) {
      if (!need(arg_bytes)) return false;
      pos += arg_bytes;
      stack.push_back({at, false});
      return true;
    };
    auto push_counted = [&](std::size_t len_bytes) {
      if (!need(len_bytes)) return false;
      const std::size_t n = little_endian(p, pos, len_bytes);
      pos += len_bytes;
      if (!need(n)) return false;
      pos += n;
      stack.push_back({at, false});
      return true;
    };
    bool ok = true;
    switch (op) {
      case 0x80:
        ok = need(1);
        pos += 1;
        break;  // PROTO
      case '.':
        pos = p.size();
        break;  // STOP
      case '(':
        stack.push_back({at, true});
        break;  // MARK
      case 'K':
        ok = push_after(1);
        break;  // BININT1
      case 'M':
        ok = push_after(2);
        break;  // BININT2
      case 'J':
        ok = push_after(4);
        break;  // BININT
      case 'G':
        ok = push_after(8);
        break;  // BINFLOAT
      case 0x8a:
        ok = push_counted(1);
        break;  // LONG1
      case 0x8b:
        ok = push_counted(4);
        break;  // LONG4
      case 'X':
      case 'T':
      case 'B':
        ok = push_counted(4);
        break;  // BINUNICODE, BINSTRING, BINBYTES
      case 0x8c:
      case 'U':
      case 'C':
        ok = push_counted(1);
        break;  // SHORT_BIN*
      case 'N':
      case 0x88:
      case 0x89:  // NONE, NEWTRUE, NEWFALSE
      case ')':
      case ']':
      case '}':  // EMPTY_TUPLE/LIST/DICT
        stack.push_back({at, false});
        break;
      case 'h':
        ok = push_after(1);
        break;  // BINGET
      case 'j':
        ok = push_after(4);
        break;  // LONG_BINGET
      case 'q':
        ok = need(1);
        pos += 1;
        break;  // BINPUT
      case 'r':
        ok = need(4);
        pos += 4;
        break;  // LONG_BINPUT
      case 0x94:
        break;     // MEMOIZE
      case 'c': {  // GLOBAL: two lines
        for (int line = 0; line < 2 && ok; ++line) {
          const std::size_t nl = p.find('\n', pos);
          if (nl == std::string_view::npos)
            ok = false;
          else
            pos = nl + 1;
        }
        if (ok) stack.push_back({at, false});
        break;
      }
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

std::optional<std::string> pickle_size_problem(std::string_view p) {
  std::size_t pos = 0;
  // the argument of the opcode at `at`: `bytes` wide, little-endian
  auto argument = [&](std::size_t bytes) -> std::optional<std::uint64_t> {
    if (pos + bytes > p.size()) return std::nullopt;
    std::uint64_t v = 0;
    for (std::size_t i = 0; i < bytes; ++i)
      v |= static_cast<std::uint64_t>(static_cast<unsigned char>(p[pos + i])) << (8 * i);
    pos += bytes;
    return v;
  };
  while (pos < p.size()) {
    const std::size_t at = pos;
    const unsigned char op = static_cast<unsigned char>(p[pos++]);
    std::size_t fixed = 0;    // a fixed-width argument
    std::size_t counted = 0;  // a length prefix of this width, then that many bytes
    bool memo_index = false;
    switch (op) {
      case '.':
        return std::nullopt;  // STOP
      case 0x80:
      case 'K':
      case 'h':  // PROTO, BININT1, BINGET
        fixed = 1;
        break;
      case 'M':  // BININT2
        fixed = 2;
        break;
      case 'J':
      case 'j':  // BININT, LONG_BINGET
        fixed = 4;
        break;
      case 'G':
      case 0x95:  // BINFLOAT, FRAME
        fixed = 8;
        break;
      case 'q':  // BINPUT
        fixed = 1;
        memo_index = true;
        break;
      case 'r':  // LONG_BINPUT
        fixed = 4;
        memo_index = true;
        break;
      case 0x8a:
      case 0x8c:
      case 'U':
      case 'C':  // LONG1, SHORT_BINUNICODE/STRING/BYTES
        counted = 1;
        break;
      case 0x8b:
      case 'X':
      case 'T':
      case 'B':  // LONG4, BINUNICODE, BINSTRING, BINBYTES
        counted = 4;
        break;
      case 0x8d:
      case 0x8e:  // BINUNICODE8, BINBYTES8
        counted = 8;
        break;
      case 'c':  // GLOBAL: module and name, each ended by a newline
        for (int line = 0; line < 2; ++line) {
          const std::size_t nl = p.find('\n', pos);
          if (nl == std::string_view::npos) return std::nullopt;  // truncated: LibTorch says so
          pos = nl + 1;
        }
        continue;
      case '(':
      case 'N':
      case 0x88:
      case 0x89:
      case ')':
      case ']':
      case '}':
      case 0x94:
      case 't':
      case 'l':
      case 'd':
      case 0x85:
      case 0x86:
      case 0x87:
      case 'R':
      case 0x81:
      case 'Q':
      case 'b':
      case 'u':
      case 'e':
      case 's':
      case 'a':
      case '0':
      case '1':
      case '2':
      case 0x8f:
      case 0x90:
      case 0x91:
      case 0x92:
      case 0x93:
        continue;  // no argument
      default:
        return std::nullopt;  // an opcode LibTorch does not know either
    }
    const auto value = argument(fixed + counted);  // one of the two is zero
    if (!value) return std::nullopt;  // truncated: LibTorch reports that without allocating
    if (memo_index && *value > p.size())
      return "memo index " + std::to_string(*value) + " at byte " + std::to_string(at) +
             " is larger than a pickle of " + std::to_string(p.size()) + " bytes can use";
    if (counted && *value > p.size() - pos)
      return "a length of " + std::to_string(*value) + " bytes at byte " + std::to_string(at) +
             " runs past the end of the pickle";
    if (counted) pos += static_cast<std::size_t>(*value);
  }
  return std::nullopt;
}

}  // namespace vin::diagnostics
