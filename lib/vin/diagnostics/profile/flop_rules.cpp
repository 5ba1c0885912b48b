#include "vin/diagnostics/profile/flop_rules.h"

#include <array>

namespace vin::diagnostics {
namespace {

// a product of dimensions (0 where one is negative: a shape LibTorch would have refused)
FlopCount product(std::initializer_list<FlopCount> factors) {
  FlopCount p = 1;
  for (const FlopCount f : factors) p = multiply_flops(p, f);
  return p;
}

FlopCount dimension(std::int64_t size) { return size < 0 ? 0 : static_cast<FlopCount>(size); }

FlopCount product_of(const TensorShape& shape, std::size_t from) {
  FlopCount p = 1;
  for (std::size_t i = from; i < shape.size(); ++i) p = multiply_flops(p, dimension(shape[i]));
  return p;
}

const TensorShape* argument(const OperatorCall& call, std::size_t i, std::size_t rank) {
  if (i >= call.arguments.size() || !call.arguments[i] || call.arguments[i]->size() != rank)
    return nullptr;
  return &*call.arguments[i];
}

// (m, k) @ (k, n): 2·m·n·k
FlopCount mm(const OperatorCall& call, std::size_t a, std::size_t b) {
  const TensorShape* x = argument(call, a, 2);
  const TensorShape* y = argument(call, b, 2);
  if (!x || !y) return 0;
  return product({2, dimension((*x)[0]), dimension((*y)[1]), dimension((*x)[1])});
}

// (b, m, k) @ (b, k, n): 2·b·m·n·k
FlopCount bmm(const OperatorCall& call, std::size_t a, std::size_t b) {
  const TensorShape* x = argument(call, a, 3);
  const TensorShape* y = argument(call, b, 3);
  if (!x || !y) return 0;
  return product(
      {2, dimension((*x)[0]), dimension((*x)[1]), dimension((*y)[2]), dimension((*x)[2])});
}

// 2 · batch · prod(weight) · output elements per channel (transposed: input elements per
// channel); prod(weight) = c_out · c_in/groups · kernel elements
FlopCount convolution(const OperatorCall& call) {
  if (call.arguments.size() < 2 || !call.arguments[0] || !call.arguments[1]) return 0;
  const TensorShape& input = *call.arguments[0];
  const TensorShape& weight = *call.arguments[1];
  const TensorShape& spatial_of = call.transposed ? input : call.output;
  if (input.size() < 3 || weight.size() != input.size() || spatial_of.size() != input.size())
    return 0;
  return product({2, dimension(input[0]), product_of(weight, 0), product_of(spatial_of, 2)});
}

// query (b, h, s_q, d_q), key (b, h, s_k, d_q), value (b, h, s_k, d_v):
// 2·b·h·s_q·s_k·d_q + 2·b·h·s_q·s_k·d_v
FlopCount attention(const OperatorCall& call) {
  const TensorShape* q = argument(call, 0, 4);
  const TensorShape* k = argument(call, 1, 4);
  const TensorShape* v = argument(call, 2, 4);
  if (!q || !k || !v) return 0;
  const FlopCount scores =
      product({2, dimension((*q)[0]), dimension((*q)[1]), dimension((*q)[2]), dimension((*k)[2])});
  return add_flops(product({scores, dimension((*q)[3])}), product({scores, dimension((*v)[3])}));
}

enum class Rule { mm, addmm, bmm, baddbmm, convolution, attention };

struct Counted {
  std::string_view name;
  Rule rule;
};

constexpr std::array<Counted, 12> kCounted = {{
    {"aten::mm", Rule::mm},
    {"aten::addmm", Rule::addmm},
    {"aten::bmm", Rule::bmm},
    {"aten::baddbmm", Rule::baddbmm},
    {"aten::convolution", Rule::convolution},
    {"aten::_convolution", Rule::convolution},
    {"aten::_scaled_dot_product_efficient_attention", Rule::attention},
    {"aten::_scaled_dot_product_flash_attention", Rule::attention},
    {"aten::_scaled_dot_product_cudnn_attention", Rule::attention},
    {"aten::_scaled_dot_product_flash_attention_for_cpu", Rule::attention},
    {"aten::_flash_attention_forward", Rule::attention},
    {"aten::_efficient_attention_forward", Rule::attention},
}};

const Counted* counted(std::string_view name) {
  // an overload name after the dot (aten::convolution.default) is the same operator
  const std::string_view base = name.substr(0, name.find('.'));
  for (const Counted& c : kCounted)
    if (c.name == base) return &c;
  return nullptr;
}

}  // namespace

bool counts_flops(std::string_view name) { return counted(name) != nullptr; }

FlopCount operator_flops(const OperatorCall& call) {
  const Counted* c = counted(call.name);
  if (!c) return 0;
  switch (c->rule) {
    case Rule::mm:
      return mm(call, 0, 1);
    case Rule::addmm:  // self (the bias) is not counted
      return mm(call, 1, 2);
    case Rule::bmm:
      return bmm(call, 0, 1);
    case Rule::baddbmm:
      return bmm(call, 1, 2);
    case Rule::convolution:
      return convolution(call);
    case Rule::attention:
      return attention(call);
  }
  return 0;
}

}  // namespace vin::diagnostics
