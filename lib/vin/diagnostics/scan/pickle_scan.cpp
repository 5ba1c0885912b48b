#include "vin/diagnostics/scan/pickle_scan.h"

#include <algorithm>
#include <deque>
#include <map>
#include <optional>
#include <unordered_map>
#include <utility>

#include "vin/diagnostics/pickle/pickle_opcodes.h"
#include "vin/diagnostics/text/printable.h"

namespace vin::diagnostics {
namespace {

// What the walk knows of a value: enough to name a global, tell a call's target, find a
// persistent id's tag and a nested pickle's bytes. Strings and bytes are views of the stream.
struct Value {
  enum class Kind { other, text, bytes, global, object, list, dict, set, tuple, integer };
  Kind kind = Kind::other;
  std::string_view text;  // text, bytes
  std::uint64_t number = 0;  // integer: a non-negative one (BININT*, LONG1 of up to 8 bytes)
  std::string global;     // global: its name; object: the global that made it
  bool allowed = false;   // global, object: that global is on the list
  std::vector<Value> items;  // tuple: its first few items (without their own items)
};

constexpr std::size_t kTupleItemsKept = 5;  // a storage id: (storage, type, key, location, numel)

// The bytes of one element of a storage type (`torch.FloatStorage`: 4), 0 for one not known
std::uint64_t storage_element_size(std::string_view type) {
  constexpr std::pair<std::string_view, std::uint64_t> kSizes[] = {
      {"Double", 8}, {"Float", 4}, {"Half", 2}, {"BFloat16", 2}, {"Long", 8}, {"Int", 4},
      {"Short", 2}, {"Char", 1}, {"Byte", 1}, {"Bool", 1}, {"ComplexDouble", 16},
      {"ComplexFloat", 8}, {"QUInt8", 1}, {"QInt8", 1}, {"QInt32", 4}, {"QUInt4x2", 1},
      {"QUInt2x4", 1}, {"Untyped", 1}};
  constexpr std::string_view kPrefix = "torch.", kSuffix = "Storage";
  if (type.substr(0, kPrefix.size()) != kPrefix || type.size() < kPrefix.size() + kSuffix.size() ||
      type.substr(type.size() - kSuffix.size()) != kSuffix)
    return 0;
  std::string_view name = type.substr(kPrefix.size(), type.size() - kPrefix.size() - kSuffix.size());
  if (name.substr(0, 8) == "storage.") name.remove_prefix(8);  // torch.storage.UntypedStorage
  for (const auto& [n, size] : kSizes)
    if (n == name) return size;
  return 0;
}

// The opcodes torch 2.14's weights_only unpickler runs; any other makes torch.load refuse the
// stream (torch._weights_only_unpickler.Unpickler.load)
bool torch_runs(Op op) {
  switch (op) {
    case Op::GLOBAL: case Op::NEWOBJ: case Op::REDUCE: case Op::BUILD: case Op::APPEND:
    case Op::APPENDS: case Op::SETITEM: case Op::SETITEMS: case Op::MARK: case Op::TUPLE:
    case Op::TUPLE1: case Op::TUPLE2: case Op::TUPLE3: case Op::NONE: case Op::NEWFALSE:
    case Op::NEWTRUE: case Op::EMPTY_TUPLE: case Op::EMPTY_LIST: case Op::EMPTY_DICT:
    case Op::EMPTY_SET: case Op::BININT: case Op::BININT1: case Op::BININT2: case Op::BINFLOAT:
    case Op::BINUNICODE: case Op::SHORT_BINSTRING: case Op::BINPERSID: case Op::BINGET:
    case Op::LONG_BINGET: case Op::BINPUT: case Op::LONG_BINPUT: case Op::LONG1: case Op::PROTO:
    case Op::STOP:
      return true;
    default:
      return false;
  }
}

class Walk {
 public:
  Walk(std::string_view stream, const AllowList& allowed, const PickleScanLimits& limits,
       std::size_t depth)
      : p_(stream), allowed_(allowed), limits_(limits), depth_(depth) {}

  PickleVerdict run() {
    std::size_t pos = 0;
    while (pos < p_.size()) {
      PickleOpcode code;
      const OpcodeRead read = next_any_opcode(p_, pos, code);
      if (read != OpcodeRead::ok) {
        const OpcodeInfo* info = any_opcode_info(code.op);
        return broken(code.at, read == OpcodeRead::unknown
                                   ? "an opcode that is none of protocols 0-5 (" + byte_name(code.op) + ")"
                                   : std::string(info ? info->name : "an opcode") +
                                         "'s argument runs past the end of the stream");
      }
      const Op op = static_cast<Op>(code.op);
      if (!torch_runs(op)) verdict_.torch_weights_only = false;
      at_ = code.at;
      const std::optional<std::string> trouble = step(op, code, pos);
      if (trouble) return broken(code.at, *trouble);
      if (op == Op::STOP) {
        verdict_.stopped = true;
        verdict_.end = pos;
        // a whole stream hands its foreign persistent ids to the loader's persistent_load
        verdict_.runs_code = verdict_.runs_code || foreign_persistent_id_;
        return finish();
      }
    }
    return broken(p_.size(), "the stream ends before its STOP");
  }

 private:
  static std::string byte_name(unsigned char op) {
    static const char* digits = "0123456789abcdef";
    return std::string("0x") + digits[op >> 4] + digits[op & 15];
  }

  void find(std::string kind, std::string name, std::string severity, std::string reason,
            std::optional<std::uint64_t> offset) {
    ++counted_;
    if (verdict_.findings.size() >= limits_.max_findings) return;
    ScanFinding f;
    f.offset = offset;
    f.kind = std::move(kind);
    f.name = std::move(name);
    f.severity = std::move(severity);
    f.reason = std::move(reason);
    verdict_.findings.push_back(std::move(f));
  }

  // an opcode that runs code outside torch's rules
  void refuse(Op op, const std::string& reason) {
    verdict_.runs_code = true;
    verdict_.torch_weights_only = false;
    const OpcodeInfo* info = any_opcode_info(static_cast<unsigned char>(op));
    find("opcode", info ? info->name : "?", "not-allowed", reason, at_);
  }

  // a persistent id torch's rules refuse: it runs code where the whole stream reaches the
  // loader (its STOP); a stream that breaks after it, with no call or foreign global, cannot be
  // judged (the 8 bytes of a PNG signature read as NEWFALSE, PERSID and a broken line)
  void foreign_persistent_id(Op op, const std::string& reason) {
    foreign_persistent_id_ = true;
    verdict_.torch_weights_only = false;
    const OpcodeInfo* info = any_opcode_info(static_cast<unsigned char>(op));
    find("opcode", info ? info->name : "?", "not-allowed", reason, at_);
  }

  Value import(const std::string& module, const std::string& name) {
    const std::string global = imported_global(module, name);
    verdict_.globals.insert(global);
    Value v;
    v.kind = Value::Kind::global;
    v.global = global;
    v.allowed = allowed_.allows(global);
    if (!v.allowed && finding_of_.count(global) == 0) {
      verdict_.runs_code = true;
      verdict_.torch_weights_only = false;
      finding_of_[global] = verdict_.findings.size();
      const bool dangerous = dangerous_global(global);
      find("global", global, dangerous ? "dangerous" : "not-allowed",
           std::string(dangerous ? "a global known to run code" : "a global") +
               " outside torch " + kAllowListTorchVersion + "'s weights_only list",
           at_);
    }
    return v;
  }

  // `callable` called with `args` (REDUCE, NEWOBJ, INST, OBJ): what it makes
  Value call(const Value& callable, const Value& args, Op op) {
    called_anything_ = true;
    Value made;
    made.kind = Value::Kind::object;
    if (callable.kind != Value::Kind::global) {
      refuse(op, "calls a value that is not an imported global (the result of another call, a "
                 "memo entry of another kind, a string)");
      return made;
    }
    made.global = callable.global;
    made.allowed = callable.allowed;
    if (const auto it = finding_of_.find(callable.global);
        it != finding_of_.end() && it->second < verdict_.findings.size())
      verdict_.findings[it->second].called = true;
    if (unpickling_global(callable.global) && !args.items.empty() &&
        (args.items[0].kind == Value::Kind::bytes || args.items[0].kind == Value::Kind::text))
      nested(args.items[0].text, callable.global);
    // protocol 2 pickles bytes as _codecs.encode(text, "latin1"): the bytes are the text's code
    // points, which a nested pickle's walk needs
    if (callable.global == "_codecs.encode" && !args.items.empty() &&
        args.items[0].kind == Value::Kind::text) {
      if (std::optional<std::string> bytes = latin1_of(args.items[0].text)) {
        owned_.push_back(std::move(*bytes));
        made.kind = Value::Kind::bytes;
        made.text = owned_.back();
      }
    }
    return made;
  }

  // a pickle handed to an unpickling global: walked as a stream of its own
  void nested(std::string_view bytes, const std::string& by) {
    if (depth_ + 1 > limits_.max_nested_depth) {
      verdict_.runs_code = true;
      find("structure", "nested pickles", "malformed",
           "pickles nested deeper than " + std::to_string(limits_.max_nested_depth) + " levels",
           at_);
      return;
    }
    const PickleVerdict inner = scan_pickle(bytes, allowed_, limits_, depth_ + 1);
    verdict_.globals.insert(inner.globals.begin(), inner.globals.end());
    verdict_.runs_code = verdict_.runs_code || inner.runs_code || inner.cannot_judge;
    for (ScanFinding f : inner.findings) {
      f.reason += " (in the pickle given to " + by + " at offset " + std::to_string(at_) + ")";
      f.offset = at_;
      ++counted_;
      if (verdict_.findings.size() < limits_.max_findings) verdict_.findings.push_back(std::move(f));
    }
  }

  std::optional<std::string> push(Value v) {
    if (stack_.size() >= limits_.max_stack) return "more than " + std::to_string(limits_.max_stack) + " values on the stack";
    stack_.push_back(std::move(v));
    return std::nullopt;
  }

  // the values above the last MARK, and the MARK gone
  std::optional<std::vector<Value>> pop_mark() {
    if (marks_.empty()) return std::nullopt;
    const std::size_t from = marks_.back();
    marks_.pop_back();
    std::vector<Value> items(std::make_move_iterator(stack_.begin() + static_cast<std::ptrdiff_t>(from)),
                             std::make_move_iterator(stack_.end()));
    stack_.resize(from);
    return items;
  }

  // the values above the last MARK (or the bottom) that an opcode may take
  std::size_t available() const { return stack_.size() - (marks_.empty() ? 0 : marks_.back()); }

  Value pop() {
    Value v = std::move(stack_.back());
    stack_.pop_back();
    return v;
  }

  static Value tuple_of(std::vector<Value> items) {
    Value t;
    t.kind = Value::Kind::tuple;
    for (std::size_t i = 0; i < items.size() && i < kTupleItemsKept; ++i) {
      items[i].items.clear();
      t.items.push_back(std::move(items[i]));
    }
    return t;
  }

  std::string_view line_argument(const PickleOpcode& code, std::size_t pos) const {
    return p_.substr(code.at + 1, pos - code.at - 2);
  }

  // protocol 0's STRING holds a Python literal: its quotes are not part of the text
  static std::string_view unquoted(std::string_view s) {
    if (s.size() >= 2 && (s.front() == '\'' || s.front() == '"') && s.back() == s.front())
      return s.substr(1, s.size() - 2);
    return s;
  }

  static Value text(Value::Kind kind, std::string_view bytes) {
    Value v;
    v.kind = kind;
    v.text = bytes;
    return v;
  }

  std::optional<std::string> step(Op op, const PickleOpcode& code, std::size_t pos) {
    switch (op) {
      case Op::GLOBAL: case Op::INST: case Op::STACK_GLOBAL: case Op::EXT1: case Op::EXT2:
      case Op::EXT4: case Op::OBJ: case Op::REDUCE: case Op::NEWOBJ: case Op::NEWOBJ_EX:
      case Op::BINPERSID: case Op::PERSID:
        return import_or_call(op, code, pos);
      case Op::BUILD: case Op::APPEND: case Op::APPENDS: case Op::SETITEM: case Op::SETITEMS:
      case Op::ADDITEMS: case Op::TUPLE: case Op::LIST: case Op::DICT: case Op::FROZENSET:
      case Op::TUPLE1: case Op::TUPLE2: case Op::TUPLE3:
        return container(op, code);
      default:
        return value(op, code, pos);
    }
  }

  // imports, calls and persistent ids
  std::optional<std::string> import_or_call(Op op, const PickleOpcode& code, std::size_t pos) {
    switch (op) {
      case Op::GLOBAL: case Op::INST: {
        const std::string_view lines = p_.substr(code.at + 1, pos - code.at - 1);
        const std::size_t nl = lines.find('\n');
        const std::string module(lines.substr(0, nl));
        const std::string name(lines.substr(nl + 1, lines.size() - nl - 2));
        // Python decodes both as UTF-8 and stops there, before it imports anything
        if (first_invalid_utf8(module) != std::string::npos || first_invalid_utf8(name) != std::string::npos)
          return std::string(op == Op::GLOBAL ? "GLOBAL" : "INST") + " names a global in bytes that are not UTF-8";
        Value global = import(module, name);
        if (op == Op::GLOBAL) return push(std::move(global));
        auto args = pop_mark();
        if (!args) return "INST without a MARK";
        refuse(op, "INST imports and calls " + global.global + " (torch's unpickler has no INST)");
        return push(call(global, tuple_of(std::move(*args)), op));
      }
      case Op::STACK_GLOBAL: {
        if (available() < 2) return "STACK_GLOBAL with fewer than two values";
        const Value name = pop();
        const Value module = pop();
        if (module.kind != Value::Kind::text || name.kind != Value::Kind::text) {
          refuse(op, "STACK_GLOBAL imports a global named by values that are not strings");
          Value unknown;
          unknown.kind = Value::Kind::global;
          unknown.global = "?";
          return push(std::move(unknown));
        }
        return push(import(std::string(module.text), std::string(name.text)));
      }
      case Op::EXT1: case Op::EXT2: case Op::EXT4:
        refuse(op, "imports a global by its copyreg extension code, which only the loading "
                   "process's registry names");
        return push(Value{});
      case Op::OBJ: {
        auto items = pop_mark();
        if (!items) return "OBJ without a MARK";
        if (items->empty()) return "OBJ without a class";
        Value cls = std::move(items->front());
        items->erase(items->begin());
        refuse(op, "OBJ calls a class (torch's unpickler has no OBJ)");
        return push(call(cls, tuple_of(std::move(*items)), op));
      }
      case Op::REDUCE: case Op::NEWOBJ: {
        if (available() < 2) return std::string(op == Op::REDUCE ? "REDUCE" : "NEWOBJ") + " with fewer than two values";
        const Value args = pop();
        const Value callable = pop();
        return push(call(callable, args, op));
      }
      case Op::NEWOBJ_EX: {
        if (available() < 3) return "NEWOBJ_EX with fewer than three values";
        pop();
        const Value args = pop();
        const Value cls = pop();
        refuse(op, "NEWOBJ_EX makes an object with keyword arguments (torch's unpickler has no "
                   "NEWOBJ_EX)");
        return push(call(cls, args, op));
      }
      case Op::BINPERSID: {
        if (available() < 1) return "BINPERSID with no id";
        const Value id = pop();
        const bool storage = (id.kind == Value::Kind::tuple && !id.items.empty() &&
                              (id.items[0].kind == Value::Kind::text ||
                               id.items[0].kind == Value::Kind::bytes) &&
                              id.items[0].text == "storage") ||
                             (limits_.text_storage_ids && id.kind == Value::Kind::text);
        if (!storage)
          foreign_persistent_id(op, "a persistent id that is not a storage: the loader's "
                                    "persistent_load decides what it becomes");
        else if (id.items.size() >= 3 && id.items[2].kind == Value::Kind::text) {
          const std::string key(id.items[2].text);
          verdict_.storage_keys.insert(key);
          // the bytes its record must hold: numel elements of the storage type's size
          if (id.items.size() >= 5 && id.items[1].kind == Value::Kind::global &&
              id.items[4].kind == Value::Kind::integer)
            if (const std::uint64_t size = storage_element_size(id.items[1].global);
                size > 0 && id.items[4].number <= (std::uint64_t{1} << 56))
              verdict_.storage_bytes[key] = std::max(verdict_.storage_bytes[key], id.items[4].number * size);
        }
        return push(Value{});
      }
      case Op::PERSID:
        foreign_persistent_id(op, "a persistent id given as text, never a storage (torch's "
                                  "unpickler has no PERSID): the loader's persistent_load decides "
                                  "what it becomes");
        return push(Value{});
      default:
        return std::nullopt;
    }
  }

  // what makes or fills a container, or sets an object's state
  std::optional<std::string> container(Op op, const PickleOpcode& code) {
    switch (op) {
      case Op::BUILD: {
        if (available() < 2) return "BUILD with fewer than two values";
        pop();  // the state
        const Value& target = stack_.back();
        called_anything_ = true;
        if (target.kind == Value::Kind::object && target.allowed) return std::nullopt;
        if (target.kind == Value::Kind::object || target.kind == Value::Kind::global) {
          if (const auto it = finding_of_.find(target.global);
              it != finding_of_.end() && it->second < verdict_.findings.size())
            verdict_.findings[it->second].called = true;
          if (!target.allowed) return std::nullopt;  // the global is the finding
        }
        refuse(op, "BUILD sets the state of a value torch's type rules refuse (its __setstate__ "
                   "or attributes)");
        return std::nullopt;
      }
      case Op::APPEND: case Op::APPENDS: {
        std::optional<std::vector<Value>> items;
        if (op == Op::APPENDS) {
          items = pop_mark();
          if (!items) return "APPENDS without a MARK";
        } else {
          if (available() < 2) return "APPEND with fewer than two values";
          pop();
        }
        if (stack_.empty()) return std::string(any_opcode_info(code.op)->name) + " without a list";
        if (stack_.back().kind != Value::Kind::list)
          refuse(op, "appends to a value that is not a list (its append or extend method runs)");
        return std::nullopt;
      }
      case Op::SETITEM: case Op::SETITEMS: {
        if (op == Op::SETITEMS) {
          if (!pop_mark()) return "SETITEMS without a MARK";
        } else {
          if (available() < 3) return "SETITEM with fewer than three values";
          pop();
          pop();
        }
        if (stack_.empty()) return std::string(any_opcode_info(code.op)->name) + " without a dict";
        const Value& target = stack_.back();
        const bool dict = target.kind == Value::Kind::dict ||
                          (target.kind == Value::Kind::object &&
                           (target.global == "collections.OrderedDict" ||
                            target.global == "collections.Counter"));
        if (!dict && !(target.kind == Value::Kind::object && !target.allowed))
          refuse(op, "sets an item of a value that is not a dict (its __setitem__ runs)");
        return std::nullopt;
      }
      case Op::ADDITEMS: {
        if (!pop_mark()) return "ADDITEMS without a MARK";
        if (stack_.empty()) return "ADDITEMS without a set";
        if (stack_.back().kind != Value::Kind::set)
          refuse(op, "adds to a value that is not a set (its add method runs)");
        return std::nullopt;
      }
      case Op::TUPLE: case Op::LIST: case Op::DICT: case Op::FROZENSET: {
        auto items = pop_mark();
        if (!items) return std::string(any_opcode_info(code.op)->name) + " without a MARK";
        if (op == Op::TUPLE) return push(tuple_of(std::move(*items)));
        return push(text(op == Op::LIST ? Value::Kind::list
                                        : op == Op::DICT ? Value::Kind::dict : Value::Kind::other,
                         {}));
      }
      case Op::TUPLE1: case Op::TUPLE2: case Op::TUPLE3: {
        const std::size_t n = op == Op::TUPLE1 ? 1 : op == Op::TUPLE2 ? 2 : 3;
        if (available() < n) return std::string(any_opcode_info(code.op)->name) + " with too few values";
        std::vector<Value> items(std::make_move_iterator(stack_.end() - static_cast<std::ptrdiff_t>(n)),
                                 std::make_move_iterator(stack_.end()));
        stack_.resize(stack_.size() - n);
        return push(tuple_of(std::move(items)));
      }
      default:
        return std::nullopt;
    }
  }

  // values, the stack and the memo
  std::optional<std::string> value(Op op, const PickleOpcode& code, std::size_t pos) {
    const std::string_view counted =
        code.counted ? p_.substr(pos - static_cast<std::size_t>(code.value),
                                 static_cast<std::size_t>(code.value))
                     : std::string_view();
    switch (op) {
      case Op::PROTO: case Op::FRAME: case Op::STOP: case Op::READONLY_BUFFER:
        if (op == Op::STOP && stack_.empty()) return "STOP with nothing on the stack";
        return std::nullopt;
      case Op::MARK:
        if (marks_.size() >= limits_.max_stack) return "too many marks";
        marks_.push_back(stack_.size());
        return std::nullopt;
      case Op::POP:
        if (available() > 0) stack_.pop_back();
        else if (!pop_mark()) return "POP with nothing to pop";
        return std::nullopt;
      case Op::POP_MARK:
        return pop_mark() ? std::nullopt : std::optional<std::string>("POP_MARK without a MARK");
      case Op::DUP:
        if (available() == 0) return "DUP with nothing to copy";
        return push(stack_.back());
      case Op::BINUNICODE: case Op::SHORT_BINUNICODE: case Op::BINUNICODE8: case Op::BINSTRING:
      case Op::SHORT_BINSTRING:
        return push(text(Value::Kind::text, counted));
      case Op::BINBYTES: case Op::SHORT_BINBYTES: case Op::BINBYTES8: case Op::BYTEARRAY8:
        return push(text(Value::Kind::bytes, counted));
      case Op::STRING:
        return push(text(Value::Kind::text, unquoted(line_argument(code, pos))));
      case Op::UNICODE:
        return push(text(Value::Kind::text, line_argument(code, pos)));
      case Op::EMPTY_LIST:
        return push(text(Value::Kind::list, {}));
      case Op::EMPTY_DICT:
        return push(text(Value::Kind::dict, {}));
      case Op::EMPTY_SET:
        return push(text(Value::Kind::set, {}));
      case Op::EMPTY_TUPLE:
        return push(tuple_of({}));
      case Op::BINPUT: case Op::LONG_BINPUT: case Op::PUT: case Op::MEMOIZE: {
        if (available() == 0) return "a memo put with nothing on the stack";
        std::uint64_t index = code.value;
        if (op == Op::MEMOIZE) index = memo_.size();
        if (op == Op::PUT && !parse_index(line_argument(code, pos), index)) return "PUT's index is not a number";
        if (memo_.size() >= limits_.max_memo && memo_.count(index) == 0) return "too many memo entries";
        memo_[index] = stack_.back();
        return std::nullopt;
      }
      case Op::BINGET: case Op::LONG_BINGET: case Op::GET: {
        std::uint64_t index = code.value;
        if (op == Op::GET && !parse_index(line_argument(code, pos), index)) return "GET's index is not a number";
        const auto it = memo_.find(index);
        if (it == memo_.end()) return "a memo read of entry " + std::to_string(index) + ", which no put made";
        return push(it->second);
      }
      case Op::BININT: case Op::BININT1: case Op::BININT2: {  // a storage's element count
        Value n;
        if (op != Op::BININT || code.value < 0x80000000u) {
          n.kind = Value::Kind::integer;
          n.number = code.value;
        }
        return push(std::move(n));
      }
      case Op::LONG1: {
        Value n;
        if (counted.size() <= 8 && (counted.empty() || static_cast<unsigned char>(counted.back()) < 0x80)) {
          n.kind = Value::Kind::integer;
          for (std::size_t i = counted.size(); i-- > 0;)
            n.number = (n.number << 8) | static_cast<unsigned char>(counted[i]);
        }
        return push(std::move(n));
      }
      default:  // other numbers, None, booleans, NEXT_BUFFER: a value of no interest
        return push(Value{});

    }
  }

  // UTF-8 text whose code points are all below 256, as the bytes of those code points
  static std::optional<std::string> latin1_of(std::string_view utf8) {
    std::string out;
    out.reserve(utf8.size());
    for (std::size_t i = 0; i < utf8.size(); ++i) {
      const auto c = static_cast<unsigned char>(utf8[i]);
      if (c < 0x80) {
        out += static_cast<char>(c);
      } else if ((c == 0xc2 || c == 0xc3) && i + 1 < utf8.size() &&
                 (static_cast<unsigned char>(utf8[i + 1]) & 0xc0) == 0x80) {
        out += static_cast<char>(((c & 0x03) << 6) | (static_cast<unsigned char>(utf8[i + 1]) & 0x3f));
        ++i;
      } else {
        return std::nullopt;  // a code point past 255: encode would raise
      }
    }
    return out;
  }

  static bool parse_index(std::string_view s, std::uint64_t& out) {
    if (s.empty() || s.size() > 19) return false;
    out = 0;
    for (const char c : s) {
      if (c < '0' || c > '9') return false;
      out = out * 10 + static_cast<std::uint64_t>(c - '0');
    }
    return true;
  }

  // the stream cannot be walked past `at`: fail closed after a global outside the list or a call
  PickleVerdict broken(std::size_t at, const std::string& why) {
    verdict_.end = at;
    verdict_.torch_weights_only = false;
    if (verdict_.runs_code || called_anything_) {
      verdict_.runs_code = true;
      find("structure", "broken stream", "malformed",
           "the stream breaks at offset " + std::to_string(at) + " (" + why +
               ") after a call or a global outside the list: loading may already have run it",
           at);
    } else {
      verdict_.cannot_judge = true;
      find("structure", "broken stream", "malformed",
           "the stream breaks at offset " + std::to_string(at) + " (" + why +
               ") before anything that runs code",
           at);
    }
    return finish();
  }

  PickleVerdict finish() {
    if (counted_ > verdict_.findings.size())
      verdict_.findings.push_back({"", std::nullopt, std::nullopt, "structure", "more findings",
                                   "malformed", false,
                                   std::to_string(counted_ - verdict_.findings.size()) +
                                       " more findings in this stream are not listed"});
    return std::move(verdict_);
  }

  std::string_view p_;
  const AllowList& allowed_;
  const PickleScanLimits& limits_;
  std::size_t depth_;
  std::vector<Value> stack_;
  std::vector<std::size_t> marks_;
  std::unordered_map<std::uint64_t, Value> memo_;
  std::deque<std::string> owned_;  // bytes a call made (_codecs.encode's), which values view
  std::map<std::string, std::size_t> finding_of_;  // a global's finding
  bool called_anything_ = false;
  bool foreign_persistent_id_ = false;
  std::size_t at_ = 0;
  std::size_t counted_ = 0;
  PickleVerdict verdict_;
};

}  // namespace

PickleVerdict scan_pickle(std::string_view stream, const AllowList& allowed,
                          const PickleScanLimits& limits, std::size_t depth) {
  return Walk(stream, allowed, limits, depth).run();
}

bool pickle_name(std::string_view name) {
  for (const std::string_view suffix : {std::string_view(".pkl"), std::string_view(".pickle")})
    if (name.size() >= suffix.size() && name.substr(name.size() - suffix.size()) == suffix) return true;
  return false;
}

bool starts_with_proto(std::string_view bytes) {
  return bytes.size() >= 2 && static_cast<unsigned char>(bytes[0]) == 0x80 &&
         static_cast<unsigned char>(bytes[1]) >= 2 && static_cast<unsigned char>(bytes[1]) <= 5;
}

}  // namespace vin::diagnostics
