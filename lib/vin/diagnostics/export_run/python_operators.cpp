#include "vin/diagnostics/export_run/python_operators.h"

#include <cmath>
#include <map>

#include "vin/diagnostics/records/error.h"

namespace vin::diagnostics::export_run {
namespace {

// Python's numbers: an int (bools are ints) or a float
struct Number {
  bool is_int = true;
  std::int64_t i = 0;
  double f = 0;
  double real() const { return is_int ? static_cast<double>(i) : f; }
};

Number number(const c10::IValue& v, const std::string& op) {
  if (v.isInt()) return {true, v.toInt(), 0};
  if (v.isBool()) return {true, v.toBool() ? 1 : 0, 0};
  if (v.isDouble()) return {false, 0, v.toDouble()};
  throw Error(op + ": an argument that is not a number (" + v.tagKind() + ")");
}

c10::IValue value(const Number& n) { return n.is_int ? c10::IValue(n.i) : c10::IValue(n.f); }

std::int64_t floor_div(std::int64_t a, std::int64_t b) {
  const std::int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

std::int64_t floor_mod(std::int64_t a, std::int64_t b) {
  const std::int64_t r = a % b;
  return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;
}

enum class Op {
  add, sub, mul, floordiv, truediv, mod, pow, neg, pos, abs, eq, ne, lt, le, gt, ge, and_, or_,
  not_, max, min, to_float, to_int, ceil, floor, trunc
};

const std::map<std::string, std::pair<Op, std::size_t>, std::less<>>& operators() {
  static const std::map<std::string, std::pair<Op, std::size_t>, std::less<>> kOps = {
      {"_operator.add", {Op::add, 2}},        {"_operator.sub", {Op::sub, 2}},
      {"_operator.mul", {Op::mul, 2}},        {"_operator.floordiv", {Op::floordiv, 2}},
      {"_operator.truediv", {Op::truediv, 2}}, {"_operator.mod", {Op::mod, 2}},
      {"_operator.pow", {Op::pow, 2}},        {"_operator.neg", {Op::neg, 1}},
      {"_operator.pos", {Op::pos, 1}},        {"_operator.abs", {Op::abs, 1}},
      {"_operator.eq", {Op::eq, 2}},          {"_operator.ne", {Op::ne, 2}},
      {"_operator.lt", {Op::lt, 2}},          {"_operator.le", {Op::le, 2}},
      {"_operator.gt", {Op::gt, 2}},          {"_operator.ge", {Op::ge, 2}},
      {"_operator.and_", {Op::and_, 2}},      {"_operator.or_", {Op::or_, 2}},
      {"_operator.not_", {Op::not_, 1}},      {"torch.sym_max", {Op::max, 2}},
      {"torch.sym_min", {Op::min, 2}},        {"torch.sym_not", {Op::not_, 1}},
      {"torch.sym_float", {Op::to_float, 1}}, {"torch.sym_int", {Op::to_int, 1}},
      {"math.ceil", {Op::ceil, 1}},           {"math.floor", {Op::floor, 1}},
      {"math.trunc", {Op::trunc, 1}}};
  return kOps;
}

c10::IValue arithmetic(Op op, const Number& a, const Number& b, const std::string& name) {
  const bool ints = a.is_int && b.is_int;
  switch (op) {
    case Op::add:
      return ints ? c10::IValue(a.i + b.i) : c10::IValue(a.real() + b.real());
    case Op::sub:
      return ints ? c10::IValue(a.i - b.i) : c10::IValue(a.real() - b.real());
    case Op::mul:
      return ints ? c10::IValue(a.i * b.i) : c10::IValue(a.real() * b.real());
    case Op::floordiv:
    case Op::mod:
      if (ints ? b.i == 0 : b.real() == 0)
        throw Error(name + ": division by zero (Python raises ZeroDivisionError)");
      if (ints) return op == Op::floordiv ? floor_div(a.i, b.i) : floor_mod(a.i, b.i);
      if (op == Op::floordiv) return std::floor(a.real() / b.real());
      {
        const double r = std::fmod(a.real(), b.real());
        return (r != 0 && ((r < 0) != (b.real() < 0))) ? r + b.real() : r;
      }
    case Op::truediv:
      if (b.real() == 0) throw Error(name + ": division by zero (Python raises ZeroDivisionError)");
      return a.real() / b.real();
    case Op::pow:
      if (ints && b.i >= 0) {
        std::int64_t out = 1;
        for (std::int64_t k = 0; k < b.i; ++k) out *= a.i;
        return out;
      }
      return std::pow(a.real(), b.real());
    case Op::eq:
      return a.real() == b.real() && (!ints || a.i == b.i);
    case Op::ne:
      return !(a.real() == b.real() && (!ints || a.i == b.i));
    case Op::lt:
      return ints ? a.i < b.i : a.real() < b.real();
    case Op::le:
      return ints ? a.i <= b.i : a.real() <= b.real();
    case Op::gt:
      return ints ? a.i > b.i : a.real() > b.real();
    case Op::ge:
      return ints ? a.i >= b.i : a.real() >= b.real();
    case Op::and_:
      return ints ? c10::IValue(a.i & b.i) : c10::IValue(a.real() != 0 && b.real() != 0);
    case Op::or_:
      return ints ? c10::IValue(a.i | b.i) : c10::IValue(a.real() != 0 || b.real() != 0);
    case Op::max:
      return ints ? c10::IValue(std::max(a.i, b.i)) : c10::IValue(std::max(a.real(), b.real()));
    case Op::min:
      return ints ? c10::IValue(std::min(a.i, b.i)) : c10::IValue(std::min(a.real(), b.real()));
    default:
      throw Error(name + ": not a binary operation");
  }
}

}  // namespace

bool is_python_operator(const std::string& target) { return operators().count(target) > 0; }

bool python_operator_arity_fits(const std::string& target, std::size_t count) {
  const auto it = operators().find(target);
  return it != operators().end() && it->second.second == count;
}

c10::IValue apply_python_operator(const std::string& target,
                                  const std::vector<c10::IValue>& args) {
  const auto it = operators().find(target);
  if (it == operators().end() || args.size() != it->second.second)
    throw Error(target + ": not a Python operation this runner computes");
  const Op op = it->second.first;
  if (args.size() == 2) {
    // `and_` and `or_` of two bools are bools, as Python's
    if ((op == Op::and_ || op == Op::or_) && args[0].isBool() && args[1].isBool())
      return op == Op::and_ ? args[0].toBool() && args[1].toBool()
                            : args[0].toBool() || args[1].toBool();
    return arithmetic(op, number(args[0], target), number(args[1], target), target);
  }
  const Number a = number(args[0], target);
  switch (op) {
    case Op::neg:
      return a.is_int ? c10::IValue(-a.i) : c10::IValue(-a.f);
    case Op::pos:
      return value(a);
    case Op::abs:
      return a.is_int ? c10::IValue(a.i < 0 ? -a.i : a.i) : c10::IValue(std::fabs(a.f));
    case Op::not_:
      return a.real() == 0;
    case Op::to_float:
      return a.real();
    case Op::to_int:
    case Op::trunc:
      return a.is_int ? a.i : static_cast<std::int64_t>(std::trunc(a.f));
    case Op::ceil:
      return a.is_int ? a.i : static_cast<std::int64_t>(std::ceil(a.f));
    case Op::floor:
      return a.is_int ? a.i : static_cast<std::int64_t>(std::floor(a.f));
    default:
      throw Error(target + ": not a unary operation");
  }
}

std::optional<std::string> tensor_property(const std::string& target) {
  static const std::map<std::string, std::string, std::less<>> kProperties = {
      {"torch.ops.aten.sym_size.int", "size"},
      {"torch.ops.aten.sym_numel.default", "numel"},
      {"torch.ops.aten.sym_stride.int", "stride"},
      {"torch.ops.aten.sym_storage_offset.default", "storage_offset"}};
  const auto it = kProperties.find(target);
  if (it == kProperties.end()) return std::nullopt;
  return it->second;
}

c10::IValue read_tensor_property(const std::string& name, const std::vector<c10::IValue>& args) {
  if (args.empty() || !args[0].isTensor())
    throw Error("aten.sym_" + name + ": its first argument is not a tensor");
  const at::Tensor& t = args[0].toTensor();
  if (name == "numel") return t.numel();
  if (name == "storage_offset") return t.storage_offset();
  if (args.size() != 2 || !args[1].isInt())
    throw Error("aten.sym_" + name + ": its dimension is not an integer");
  std::int64_t dim = args[1].toInt();
  const std::int64_t rank = t.dim();
  if (dim < 0) dim += rank;
  if (dim < 0 || dim >= rank)
    throw Error("aten.sym_" + name + ": dimension " + std::to_string(args[1].toInt()) +
                " of a tensor of " + std::to_string(rank));
  return name == "size" ? t.size(dim) : t.stride(dim);
}

}  // namespace vin::diagnostics::export_run
