#include "vin/diagnostics/pickle/pickle_reader.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <iterator>

#include "vin/diagnostics/pickle/pickle_opcodes.h"
#include "vin/diagnostics/text/dtypes.h"
#include "vin/diagnostics/text/printable.h"

namespace vin::diagnostics {
namespace {

using Kind = PickleValue::Kind;

// Sizes of a tensor from _rebuild_tensor_v2's `size` argument: a tuple of non-negative ints.
std::int64_t numel_of(PickleRef size) {
  if (!size || size->kind != Kind::tuple) throw UnsupportedPickle("tensor size is not a tuple");
  std::int64_t n = 1;
  for (const auto& d : size->items) {
    if (d->kind != Kind::integer || d->integer < 0)
      throw UnsupportedPickle("tensor size is not a tuple of non-negative ints");
    if (d->integer != 0 && n > INT64_MAX / d->integer)
      throw UnsupportedPickle("tensor size overflows");
    n *= d->integer;
  }
  return n;
}

// Whether a tensor of `size` and `stride` from `offset` fits in `storage`, as LibTorch's
// Tensor::set_ demands when it rebuilds the tensor (else LibTorch refuses the archive, and so must
// this reader, to give no answer LibTorch would not).
bool fits_storage(PickleRef storage, PickleRef offset, PickleRef size, PickleRef stride,
                  std::int64_t numel) {
  if (storage->kind != Kind::storage || offset->kind != Kind::integer || offset->integer < 0 ||
      stride->kind != Kind::tuple || stride->items.size() != size->items.size())
    return false;
  if (numel == 0) return true;
  std::int64_t last = offset->integer;  // the element the tensor's last index reaches
  for (std::size_t i = 0; i < size->items.size(); ++i) {
    const PickleRef st = stride->items[i];
    if (st->kind != Kind::integer || st->integer < 0) return false;
    std::int64_t step = 0;
    if (__builtin_mul_overflow(size->items[i]->integer - 1, st->integer, &step) ||
        __builtin_add_overflow(last, step, &last))
      return false;
  }
  return last < storage->numel;
}

// What a PyTorch 0.3 Variable's state (BUILD after its class was called on its data) says of
// requires_grad, read as torch.Tensor.__setstate__ still reads it: (requires_grad, volatile,
// hooks), or the legacy five (data, _, hooks, requires_grad, volatile). Anything else set on a
// tensor is no state torch writes.
bool variable_requires_grad(PickleRef state) {
  const auto& s = state->items;
  if (state->kind == Kind::tuple && (s.size() == 3 || s.size() == 5)) {
    const PickleRef flag = s[s.size() == 3 ? 0 : 3];
    if (flag->kind == Kind::boolean) return flag->boolean;
  }
  throw UnsupportedPickle("BUILD of a tensor with a state that is no Variable's");
}

class Machine;

// What REDUCE makes of `callable(*args)` for the callables TorchScript writes.
PickleRef reduce(Machine& m, PickleRef callable, PickleRef args);

class Machine {
 public:
  Machine(std::string_view p, const PersistentTensors* persistent)
      : p_(p), persistent_(persistent) {}

  PickleValue* make(Kind kind) {
    if (doc_.used_in_last_block == PickleDocument::kBlockValues) {
      doc_.blocks.emplace_back(new PickleValue[PickleDocument::kBlockValues]);
      doc_.used_in_last_block = 0;
    }
    PickleValue* v = &doc_.blocks.back()[doc_.used_in_last_block++];
    v->kind = kind;
    return v;
  }

  PickleDocument run() && {
    try {
      return std::move(*this).read();
    } catch (const TruncatedPickle& e) {  // the type kept: a legacy file's reader reads on
      throw TruncatedPickle(doc_.foreign.before(e.what()));
    } catch (const UnsupportedPickle& e) {
      throw UnsupportedPickle(doc_.foreign.before(e.what()));
    }
  }

 private:
  PickleDocument read() && {
    PickleOpcode code;
    while (pos_ < p_.size()) {
      switch (next_opcode(p_, pos_, code)) {
        case OpcodeRead::ok:
          break;
        case OpcodeRead::truncated:
        case OpcodeRead::too_long:
          throw TruncatedPickle("truncated");
        case OpcodeRead::unknown:
          break;  // refused below
      }
      const Op op = static_cast<Op>(code.op);
      if (op == Op::PROTO) continue;
      if (op == Op::STOP) {
        if (stack_.size() != 1 || !stack_.back()) throw UnsupportedPickle("bad STOP");
        doc_.root = stack_.back();
        doc_.end = pos_;
        return std::move(doc_);
      }
      if (!push_constant(op, code) && !build_container(op, code) && !apply_object_op(op, code))
        throw UnsupportedPickle("opcode " + std::to_string(code.op) + " not understood");
    }
    throw TruncatedPickle("no STOP");
  }

  // the opcodes that push one value read from their argument (false: not one of them)
  bool push_constant(Op op, const PickleOpcode& code) {
    switch (op) {
      case Op::NONE:
        push(shared(none_, Kind::none));
        break;
      case Op::NEWTRUE:
        push(shared(true_, Kind::boolean, [](PickleValue& v) { v.boolean = true; }));
        break;
      case Op::NEWFALSE:
        push(shared(false_, Kind::boolean));
        break;
      case Op::BININT1:
        push(shared(small_ints_[code.value & 0xff], Kind::integer,
                    [&](PickleValue& v) { v.integer = static_cast<std::int64_t>(code.value); }));
        break;
      case Op::BININT2:
        push_int(static_cast<std::int64_t>(code.value));
        break;
      case Op::BININT:
        push_int(static_cast<std::int32_t>(code.value));
        break;
      case Op::LONG1:
      case Op::LONG4:
        if (argument(code).size() > 8) {  // a Python int wider than 64 bits: named, not read
          push_text(Kind::opaque, "builtins.int");
          auto* wide = const_cast<PickleValue*>(stack_.back());  // its two's-complement bytes
          wide->items.push_back(make(Kind::bytes));
          const_cast<PickleValue*>(wide->items.back())->text = std::string(argument(code));
        } else {
          push_int(long1(argument(code)));
        }
        break;
      case Op::BINFLOAT: {
        std::uint64_t bits = 0;  // the 8 bytes again, big-endian
        for (unsigned char c : p_.substr(code.at + 1, 8)) bits = (bits << 8) | c;
        auto v = make(Kind::floating);
        std::memcpy(&v->floating, &bits, sizeof bits);
        push(v);
        break;
      }
      case Op::BINUNICODE:
      case Op::SHORT_BINUNICODE:
      case Op::BINSTRING:
      case Op::SHORT_BINSTRING:
        push_text(Kind::string, argument(code));
        break;
      case Op::BINUNICODE8:
        push_text(Kind::string, argument(code));
        break;
      case Op::BINBYTES8:
      case Op::BINBYTES:
      case Op::SHORT_BINBYTES:
        push_text(Kind::bytes, argument(code));
        break;
      case Op::EMPTY_TUPLE:
        push(shared(empty_tuple_, Kind::tuple));
        break;
      case Op::EMPTY_LIST:
        push(make(Kind::list));
        break;
      case Op::EMPTY_DICT:
        push(make(Kind::dict));
        break;
      case Op::EMPTY_SET:  // a set (protocol 4): opaque, its items kept
        push_text(Kind::opaque, "builtins.set");
        break;
      default:
        return false;
    }
    return true;
  }

  // MARK, and the opcodes that make or fill a tuple, list or dict from the stack
  bool build_container(Op op, const PickleOpcode& code) {
    switch (op) {
      case Op::MARK:
        marks_.push_back(stack_.size());
        break;
      case Op::TUPLE: {
        auto v = make(Kind::tuple);
        v->items = pop_to_mark();
        push(v);
        break;
      }
      case Op::TUPLE1:
      case Op::TUPLE2:
      case Op::TUPLE3: {
        auto v = make(Kind::tuple);
        const std::size_t n = stack_effect(code.op).takes;
        need_stack(n);
        v->items.assign(stack_.end() - static_cast<std::ptrdiff_t>(n), stack_.end());
        stack_.resize(stack_.size() - n);
        push(v);
        break;
      }
      case Op::LIST: {
        auto v = make(Kind::list);
        v->items = pop_to_mark();
        push(v);
        break;
      }
      case Op::DICT: {
        auto v = make(Kind::dict);
        v->items = pop_to_mark();
        if (v->items.size() % 2) throw UnsupportedPickle("DICT with an odd count");
        push(v);
        break;
      }
      case Op::APPENDS: {
        auto items = pop_to_mark();
        auto list = top(Kind::list);
        list->items.insert(list->items.end(), items.begin(), items.end());
        break;
      }
      case Op::APPEND: {
        auto item = pop();
        top(Kind::list)->items.push_back(item);
        break;
      }
      case Op::SETITEMS: {
        auto items = pop_to_mark();
        if (items.size() % 2) throw UnsupportedPickle("SETITEMS with an odd count");
        auto dict = top(Kind::dict);
        dict->items.insert(dict->items.end(), items.begin(), items.end());
        break;
      }
      case Op::ADDITEMS: {  // items into the set below the MARK
        auto items = pop_to_mark();
        const PickleRef set = top_any();
        if (set->kind != Kind::opaque || set->text != "builtins.set")
          throw UnsupportedPickle("ADDITEMS to a value that is not a set");
        auto* target = const_cast<PickleValue*>(set);  // every value is this machine's own
        target->items.insert(target->items.end(), items.begin(), items.end());
        break;
      }
      case Op::FROZENSET: {
        auto v = make(Kind::opaque);
        v->text = "builtins.frozenset";
        v->items = pop_to_mark();
        push(v);
        break;
      }
      case Op::SETITEM: {
        auto value = pop();
        auto key = pop();
        auto dict = top(Kind::dict);
        dict->items.push_back(key);
        dict->items.push_back(value);
        break;
      }
      default:
        return false;
    }
    return true;
  }

  // the memo, globals and objects, persistent ids and stack manipulation
  bool apply_object_op(Op op, const PickleOpcode& code) {
    switch (op) {
      case Op::BINPUT:
      case Op::LONG_BINPUT:
        memo_put(code.value);
        break;
      case Op::MEMOIZE:
        memo_put(memo_.size());
        break;
      case Op::BINGET:
      case Op::LONG_BINGET:
        push(memo_get(code.value));
        break;
      case Op::GLOBAL: {
        // "module\nname\n" between the opcode and pos_
        const std::string_view lines = p_.substr(code.at + 1, pos_ - code.at - 2);
        const std::size_t nl = lines.find('\n');
        auto v = make(Kind::global);
        v->text = global_name(lines.substr(0, nl), lines.substr(nl + 1));
        doc_.foreign.meet(v->text);
        push(v);
        break;
      }
      case Op::NEWOBJ:      // NEWOBJ: cls, args
      case Op::NEWOBJ_EX: {  // NEWOBJ_EX: cls, args, kwargs (protocol 4)
        if (op == Op::NEWOBJ_EX) pop();
        pop();  // the arguments: TorchScript writes an empty tuple
        auto cls = pop();
        if (cls->kind != Kind::global) throw UnsupportedPickle("NEWOBJ of a non-global");
        auto v = make(Kind::object);
        v->text = cls->text;
        push(v);
        break;
      }
      case Op::REDUCE: {  // REDUCE: callable, args
        auto args = pop();
        auto callable = pop();
        push(reduce(*this, callable, args));
        break;
      }
      case Op::BUILD: {  // BUILD: object, state
        // an object's state, or the attributes of an OrderedDict: every state_dict() sets its
        // `_metadata` (module versions), which pickles as a BUILD after the items; kept, not used
        auto state = pop();
        const PickleRef target = top_any();
        if (target->kind == Kind::tensor) {  // a PyTorch 0.3 Parameter's or Variable's state
          const_cast<PickleValue*>(target)->requires_grad = variable_requires_grad(state);
          break;
        }
        // (and a Python object torch.save pickled, copyreg._reconstructor's or a numpy
        // array's: opaque, its state kept and never applied)
        if (target->kind != Kind::object && target->kind != Kind::dict &&
            target->kind != Kind::opaque)
          throw UnsupportedPickle("BUILD of a value that is neither an object nor a dict");
        auto* object = const_cast<PickleValue*>(target);  // every value is this machine's own
        if (object->state) throw UnsupportedPickle("BUILD twice on one object");
        object->state = state;
        break;
      }
      case Op::STACK_GLOBAL: {  // module and name as strings on the stack (protocol 4)
        auto name = pop();
        auto module = pop();
        if (module->kind != Kind::string || name->kind != Kind::string)
          throw UnsupportedPickle("STACK_GLOBAL of values that are not strings");
        auto v = make(Kind::global);
        v->text = global_name(module->text, name->text);
        doc_.foreign.meet(v->text);
        push(v);
        break;
      }
      case Op::FRAME:  // a length hint (protocol 4): the opcodes follow as they are
        break;
      case Op::BINPERSID:
        push(persistent_value(pop()));
        break;
      case Op::POP:
        pop();
        break;
      case Op::POP_MARK:
        pop_to_mark();
        break;
      case Op::DUP:
        push(top_any());
        break;
      default:
        return false;
    }
    return true;
  }

  // the bytes of a counted argument (a string's, a LONG1's), which end at pos_
  std::string_view argument(const PickleOpcode& code) const {
    return p_.substr(pos_ - static_cast<std::size_t>(code.value),
                     static_cast<std::size_t>(code.value));
  }
  static std::int64_t long1(std::string_view b) {
    const std::size_t n = b.size();
    if (n > 8) throw UnsupportedPickle("LONG1 wider than 64 bits");
    std::uint64_t v = 0;
    for (std::size_t i = 0; i < n; ++i)
      v |= std::uint64_t{static_cast<unsigned char>(b[i])} << (8 * i);
    if (n > 0 && n < 8 && (static_cast<unsigned char>(b[n - 1]) & 0x80))
      v |= ~std::uint64_t{0} << (8 * n);  // sign-extend
    return static_cast<std::int64_t>(v);
  }
  // What a persistent id stands for: a storage (below), or a tensor the caller describes
  PickleRef persistent_value(PickleRef id) {
    if (id->kind != Kind::string || !persistent_) return storage(id);
    const auto it = persistent_->find(id->text);
    if (it == persistent_->end()) return storage(id);
    const PersistentTensor& t = it->second;
    // ('storage', type, key, location, numel), as torch.save's later formats write it
    auto fields = make(Kind::tuple);
    fields->items = {text_value(Kind::string, "storage"), text_value(Kind::global, t.storage_type),
                     text_value(Kind::string, t.storage_key), text_value(Kind::string, t.location),
                     int_value(t.storage_numel)};
    const auto ints = [&](const std::vector<std::int64_t>& values) {
      auto tuple = make(Kind::tuple);
      for (const std::int64_t v : values) tuple->items.push_back(int_value(v));
      return tuple;
    };
    // and the tensor as _rebuild_tensor_v2(storage, offset, size, stride, requires_grad) makes
    // it, its sizes and fit checked the one way
    auto args = make(Kind::tuple);
    args->items = {storage(fields), int_value(t.offset), ints(t.shape), ints(t.strides),
                   shared(false_, Kind::boolean)};
    return reduce(*this, text_value(Kind::global, "torch._utils._rebuild_tensor_v2"), args);
  }
  PickleValue* text_value(Kind kind, std::string_view text) {
    auto v = make(kind);
    v->text = std::string(text);
    return v;
  }
  PickleValue* int_value(std::int64_t i) {
    auto v = make(Kind::integer);
    v->integer = i;
    return v;
  }
  // TorchScript's persistent ids: ('storage', <type global>, key, location, numel); PyTorch
  // 1.3 and 1.4 (archive format version 1) add a sixth, None (torch.save's view metadata, never
  // used there), which LibTorch's reader ignores
  PickleRef storage(PickleRef id) {
    const auto& f = id->items;
    const bool legacy_sixth = f.size() == 6 && f[5]->kind == Kind::none;
    if (id->kind != Kind::tuple || (f.size() != 5 && !legacy_sixth) || f[0]->kind != Kind::string ||
        f[0]->text != "storage" || f[4]->kind != Kind::integer || f[4]->integer < 0)
      return make(Kind::opaque);
    auto v = make(Kind::storage);
    v->numel = f[4]->integer;
    v->text = f[1]->kind == Kind::global ? f[1]->text : std::string();
    v->items = f;
    return v;
  }
  // `slot`'s value, made (and set up by `init`) the first time
  template <class Init = void (*)(PickleValue&)>
  PickleRef shared(
      PickleRef& slot, Kind kind, Init init = [](PickleValue&) {}) {
    if (!slot) {
      PickleValue* v = make(kind);
      init(*v);
      slot = v;
    }
    return slot;
  }
  void push(PickleRef v) { stack_.push_back(std::move(v)); }
  void push_int(std::int64_t i) { push(int_value(i)); }
  void push_text(Kind kind, std::string_view text) { push(text_value(kind, text)); }
  void need_stack(std::size_t n) {
    const std::size_t floor = marks_.empty() ? 0 : marks_.back();
    if (stack_.size() < floor + n) throw UnsupportedPickle("stack underflow");
  }
  PickleRef pop() {
    need_stack(1);
    PickleRef v = std::move(stack_.back());
    stack_.pop_back();
    return v;
  }
  PickleRef top_any() {
    need_stack(1);
    return stack_.back();
  }
  PickleValue* top(Kind kind) {
    const PickleRef v = top_any();
    if (v->kind != kind) throw UnsupportedPickle("unexpected value kind");
    return const_cast<PickleValue*>(v);  // every value is this machine's own
  }
  std::vector<PickleRef> pop_to_mark() {
    if (marks_.empty()) throw UnsupportedPickle("no MARK");
    const std::size_t at = marks_.back();
    marks_.pop_back();
    std::vector<PickleRef> items(
        std::make_move_iterator(stack_.begin() + static_cast<std::ptrdiff_t>(at)),
        std::make_move_iterator(stack_.end()));
    stack_.resize(at);
    return items;
  }
  void memo_put(std::uint64_t index) {
    // a pickler numbers memo entries from 0; an index beyond the stream's length is damage
    if (index > p_.size()) throw UnsupportedPickle("memo index out of range");
    if (index >= memo_.size()) memo_.resize(static_cast<std::size_t>(index) + 1);
    memo_[static_cast<std::size_t>(index)] = top_any();
  }
  PickleRef memo_get(std::uint64_t index) {
    if (index >= memo_.size() || !memo_[static_cast<std::size_t>(index)])
      throw UnsupportedPickle("memo entry missing");
    return memo_[static_cast<std::size_t>(index)];
  }

  std::string_view p_;
  const PersistentTensors* persistent_;
  std::size_t pos_ = 0;
  std::vector<PickleRef> stack_;
  std::vector<std::size_t> marks_;
  std::vector<PickleRef> memo_;
  PickleRef none_ = nullptr, true_ = nullptr, false_ = nullptr, empty_tuple_ = nullptr;
  std::array<PickleRef, 256> small_ints_{};
  PickleDocument doc_;
};

PickleRef reduce(Machine& m, PickleRef callable, PickleRef args) {
  if (callable->kind != Kind::global || args->kind != Kind::tuple) return m.make(Kind::opaque);
  const std::string& name = callable->text;
  // the callable's name and its arguments kept (a checkpoint's objects are named by class:
  // copyreg._reconstructor's first argument), nothing called
  const auto opaque = [&] {
    auto v = m.make(Kind::opaque);
    v->text = name;
    v->items = args->items;
    return v;
  };
  const auto& a = args->items;
  if (name == "torch._utils._rebuild_tensor_v2" || name == "torch._utils._rebuild_qtensor") {
    // (storage, storage_offset, size, stride, [quantizer params,] requires_grad, hooks, ...)
    const std::size_t grad_at = name == "torch._utils._rebuild_tensor_v2" ? 4 : 5;
    if (a.size() <= grad_at || a[grad_at]->kind != Kind::boolean)
      throw UnsupportedPickle(name + " with unexpected arguments");
    auto t = m.make(Kind::tensor);
    t->numel = numel_of(a[2]);
    if (!fits_storage(a[0], a[1], a[2], a[3], t->numel))
      throw UnsupportedPickle(name + " of a tensor its storage cannot hold");
    t->requires_grad = a[grad_at]->boolean;
    t->text = name;
    t->items = a;
    return t;
  }
  // torch.save of an nn.Parameter: (tensor, requires_grad, hooks[, state]); `text` says it is
  // one (a torch.export state dict holds parameters and buffers side by side)
  if ((name == "torch._utils._rebuild_parameter" ||
       name == "torch._utils._rebuild_parameter_with_state") &&
      a.size() >= 2 && a[0]->kind == Kind::tensor && a[1]->kind == Kind::boolean) {
    auto t = m.make(Kind::tensor);
    *t = *a[0];
    t->requires_grad = a[1]->boolean;
    t->text = "torch._utils._rebuild_parameter";
    return t;
  }
  // PyTorch 0.3 and 0.4.0 pickled an nn.Parameter as its class called on its data: 0.4.0 with
  // (tensor, requires_grad), 0.3 with (tensor,) and then a BUILD of Variable's state, which
  // sets requires_grad (below); a 0.3 Variable the same way, whose requires_grad defaults to
  // false where a Parameter's defaults to true. torch.load still reads both.
  const bool parameter = name == "torch.nn.parameter.Parameter";
  if ((parameter || name == "torch.autograd.variable.Variable") && !a.empty() && a.size() <= 2 &&
      a[0]->kind == Kind::tensor && (a.size() == 1 || a[1]->kind == Kind::boolean)) {
    auto t = m.make(Kind::tensor);
    *t = *a[0];
    t->requires_grad = a.size() == 2 ? a[1]->boolean : parameter;
    if (parameter) t->text = "torch._utils._rebuild_parameter";
    return t;
  }
  // torch 2.x's tensor with Python state (an attribute set on it, a subclass):
  // _rebuild_from_type_v2(func, type, args, state) is the tensor func rebuilds from args, its
  // type and state named nowhere (a state dict holding one is still a state dict)
  if (name == "torch._tensor._rebuild_from_type_v2" && a.size() == 4 &&
      a[0]->kind == Kind::global && a[2]->kind == Kind::tuple) {
    const PickleRef rebuilt = reduce(m, a[0], a[2]);
    if (rebuilt->kind == Kind::tensor) return rebuilt;
  }
  if (name == "collections.OrderedDict") return m.make(Kind::dict);
  // typed containers: the value is the first argument
  if (name.rfind("torch.jit._pickle.", 0) == 0 && !a.empty()) return a[0];
  return opaque();
}

}  // namespace

std::string global_name(std::string_view module, std::string_view name) {
  // protocol 2 names Python 3's modules as Python 2 had them (pickle's fix_imports)
  const std::string_view python3 = module == "__builtin__" ? "builtins"
                                   : module == "copy_reg"  ? "copyreg"
                                                           : module;
  return std::string(python3) + "." + std::string(name);
}

bool rebuilt_global(std::string_view name) {
  // what reduce() rebuilds, and what the readers of its values name as data (checkpoint's
  // leaf values, saved_tensor's storages and quantizers)
  static constexpr std::string_view kRebuilt[] = {
      "torch._utils._rebuild_tensor_v2", "torch._utils._rebuild_qtensor",
      "torch._utils._rebuild_parameter", "torch._utils._rebuild_parameter_with_state",
      "torch._tensor._rebuild_from_type_v2", "torch.Tensor",
      "torch.nn.parameter.Parameter",
      "collections.OrderedDict",         "builtins.set",
      "builtins.frozenset",              "builtins.object",
      "copyreg._reconstructor",          "_codecs.encode",
      "builtins.int",  // the name a LONG wider than 64 bits is kept under
      "numpy.core.multiarray.scalar",    "numpy.dtype",
      "torch.per_tensor_affine",         "torch.per_channel_affine",
      "torch.per_tensor_symmetric",      "torch.per_channel_symmetric",
      "torch.per_channel_affine_float_qparams",
      // values TorchScript pickles as calls, described by their type (module_details)
      "torch.device",                    "builtins.complex",
      // PyTorch 1.1 and 1.2's typed lists (legacy_archive)
      "__main__.IntList",                "__main__.DoubleList",
      "__main__.BoolList",               "__main__.TensorList"};
  // TorchScript's typed containers, and its classes: objects with their state, never run
  static constexpr std::string_view kPrefixes[] = {"torch.jit._pickle.", "__torch__."};
  if (std::find(std::begin(kRebuilt), std::end(kRebuilt), name) != std::end(kRebuilt))
    return true;
  for (const std::string_view prefix : kPrefixes)
    if (name.substr(0, prefix.size()) == prefix) return true;
  constexpr std::string_view kTorch = "torch.", kStorage = "Storage";
  if (name.substr(0, kTorch.size()) != kTorch) return false;
  // a storage type (torch.FloatStorage, torch.cuda.HalfStorage) or a dtype (torch.float32)
  const std::string_view rest = name.substr(kTorch.size());
  return (rest.size() > kStorage.size() &&
          rest.substr(rest.size() - kStorage.size()) == kStorage) ||
         dtype_named(rest) != nullptr;
}

void ForeignGlobals::meet(const std::string& name) {
  if (rebuilt_global(name)) return;
  if (count_++ == 0) first_ = name;
}

std::string ForeignGlobals::before(const std::string& problem) const {
  if (count_ == 0) return problem;
  return "imports " + printable(first_, 200) +
         (count_ > 1 ? " and " + std::to_string(count_ - 1) + " more" : std::string()) +
         (count_ > 1 ? ", globals" : ", a global") +
         " this reader does not rebuild (nothing is called), and then: " + problem;
}

PickleRef dict_value(PickleRef dict, std::string_view key) {
  if (dict->kind != Kind::dict) return nullptr;
  for (std::size_t i = 0; i + 1 < dict->items.size(); i += 2)
    if (dict->items[i]->kind == Kind::string && dict->items[i]->text == key)
      return dict->items[i + 1];
  return nullptr;
}

PickleDocument read_pickle(std::string_view pickle, const PersistentTensors* persistent) {
  return Machine(pickle, persistent).run();
}

}  // namespace vin::diagnostics
