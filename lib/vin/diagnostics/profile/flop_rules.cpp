#include "vin/diagnostics/profile/flop_rules.h"

#include <array>
#include <limits>

namespace vin::diagnostics {
namespace {

constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();

// a product of non-negative factors that stops at INT64_MAX
std::int64_t product(std::initializer_list<std::int64_t> factors) {
  std::int64_t p = 1;
  for (const std::int64_t f : factors) {
    if (f < 0) return 0;
    if (f != 0 && p > kMax / f) return kMax;
    p *= f;
  }
  return p;
}

std::int64_t product_of(const TensorShape& shape, std::size_t from) {
  std::int64_t p = 1;
  for (std::size_t i = from; i < shape.size(); ++i) p = product({p, shape[i]});
  return p;
}

const TensorShape* argument(const OperatorCall& call, std::size_t i, std::size_t rank) {
  if (i >= call.arguments.size() || !call.arguments[i] || call.arguments[i]->size() != rank)
    return nullptr;
  return &*call.arguments[i];
}

// (m, k) @ (k, n): 2·m·n·k
std::int64_t mm(const OperatorCall& call, std::size_t a, std::size_t b) {
  const TensorShape* x = argument(call, a, 2);
  const TensorShape* y = argument(call, b, 2);
  if (!x || !y) return 0;
  return product({2, (*x)[0], (*y)[1], (*x)[1]});
}

// (b, m, k) @ (b, k, n): 2·b·m·n·k
std::int64_t bmm(const OperatorCall& call, std::size_t a, std::size_t b) {
  const TensorShape* x = argument(call, a, 3);
  const TensorShape* y = argument(call, b, 3);
  if (!x || !y) return 0;
  return product({2, (*x)[0], (*x)[1], (*y)[2], (*x)[2]});
}

// 2 · batch · prod(weight) · output elements per channel (transposed: input elements per
// channel); prod(weight) = c_out · c_in/groups · kernel elements
std::int64_t convolution(const OperatorCall& call) {
  if (call.arguments.size() < 2 || !call.arguments[0] || !call.arguments[1]) return 0;
  const TensorShape& input = *call.arguments[0];
  const TensorShape& weight = *call.arguments[1];
  const TensorShape& spatial_of = call.transposed ? input : call.output;
  if (input.size() < 3 || weight.size() != input.size() || spatial_of.size() != input.size())
    return 0;
  return product({2, input[0], product_of(weight, 0), product_of(spatial_of, 2)});
}

// query (b, h, s_q, d_q), key (b, h, s_k, d_q), value (b, h, s_k, d_v):
// 2·b·h·s_q·s_k·d_q + 2·b·h·s_q·s_k·d_v
std::int64_t attention(const OperatorCall& call) {
  const TensorShape* q = argument(call, 0, 4);
  const TensorShape* k = argument(call, 1, 4);
  const TensorShape* v = argument(call, 2, 4);
  if (!q || !k || !v) return 0;
  const std::int64_t scores = product({2, (*q)[0], (*q)[1], (*q)[2], (*k)[2]});
  return saturating_add(product({scores, (*q)[3]}), product({scores, (*v)[3]}));
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

std::int64_t saturating_add(std::int64_t a, std::int64_t b) { return a > kMax - b ? kMax : a + b; }

std::int64_t operator_flops(const OperatorCall& call) {
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
