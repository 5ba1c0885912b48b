#include "vin/diagnostics/profile/flop_rules.h"

#include <algorithm>
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

// Operators without matrix work, as aten names them (sorted: found by binary search). What real
// models call (torchvision's, torch.nn's recurrent and transformer modules) and their kin, and the
// checks an exported program makes (_assert_tensor_metadata, sym_constrain_range, ...).
constexpr std::string_view kWithoutMatrixWork[] = {
    "_adaptive_avg_pool2d", "_adaptive_avg_pool3d", "_assert_async", "_assert_scalar",
    "_assert_tensor_metadata", "_batch_norm_impl_index", "_functional_assert_async",
    "_functional_assert_scalar", "_log_softmax", "_reshape_alias", "_safe_softmax", "_softmax",
    "_to_copy", "_transform_bias_rescale_qkv", "_unsafe_view", "abs", "abs_",
    "adaptive_avg_pool1d", "adaptive_avg_pool2d", "adaptive_avg_pool3d", "adaptive_max_pool1d",
    "adaptive_max_pool2d", "adaptive_max_pool3d", "add", "add_", "addcdiv", "addcmul", "alias",
    "all", "alpha_dropout", "amax", "amin", "any", "arange", "argmax", "argmin", "argsort",
    "as_strided", "as_strided_", "avg_pool1d", "avg_pool2d", "avg_pool3d", "batch_norm",
    "bernoulli_", "bitwise_and", "bitwise_not", "bitwise_or", "cat", "ceil", "chunk", "clamp",
    "clamp_", "clamp_max", "clamp_max_", "clamp_min", "clamp_min_", "clone", "constant_pad_nd",
    "contiguous", "copy_", "cos", "cudnn_is_acceptable", "cumsum", "detach", "detach_", "div",
    "div_", "dropout", "dropout_", "elu", "elu_", "embedding", "empty", "empty_like",
    "empty_strided", "eq", "erf", "exp", "expand", "expand_as", "feature_alpha_dropout",
    "feature_dropout", "fill_", "flatten", "flip", "floor", "floor_divide", "full", "full_like",
    "gather", "ge", "gelu", "glu", "group_norm", "gt", "hardsigmoid", "hardsigmoid_", "hardswish",
    "hardswish_", "hardtanh", "hardtanh_", "index", "index_select", "instance_norm", "is_nonzero",
    "isinf", "isnan", "isneginf", "isposinf", "item", "layer_norm", "le", "leaky_relu",
    "leaky_relu_", "lift_fresh", "log", "log_softmax", "logical_and", "logical_not", "logical_or",
    "logical_xor", "lt", "masked_fill", "masked_fill_", "max", "max_pool1d",
    "max_pool1d_with_indices", "max_pool2d", "max_pool2d_with_indices", "max_pool3d",
    "max_pool3d_with_indices", "maximum", "mean", "min", "minimum", "mish", "movedim", "mul",
    "mul_", "nan_to_num", "narrow", "native_batch_norm", "native_dropout", "native_group_norm",
    "native_layer_norm", "ne", "neg", "new_empty", "new_full", "new_ones", "new_zeros", "nonzero",
    "norm", "ones", "ones_like", "pad", "permute", "pow", "prelu", "reciprocal",
    "reflection_pad1d", "reflection_pad2d", "relu", "relu6", "relu_", "repeat",
    "replication_pad1d", "replication_pad2d", "reshape", "reshape_as", "resize_", "resolve_conj",
    "resolve_neg", "roll", "round", "rsqrt", "rsub", "scalar_tensor", "scatter", "scatter_",
    "select", "selu", "sigmoid", "sigmoid_", "sign", "silu", "silu_", "sin", "size", "slice",
    "softmax", "softplus", "sort", "split", "split_with_sizes", "sqrt", "square", "squeeze",
    "squeeze_", "stack", "std", "sub", "sub_", "sum", "swapaxes", "sym_constrain_range",
    "sym_constrain_range_for_size", "t", "tanh", "tanh_", "threshold", "threshold_", "to", "topk",
    "transpose", "transpose_", "unbind", "unflatten", "unsafe_chunk", "unsafe_split", "unsqueeze",
    "unsqueeze_", "upsample_bicubic2d", "upsample_bilinear2d", "upsample_linear1d",
    "upsample_nearest1d", "upsample_nearest2d", "upsample_nearest3d", "var", "var_mean", "view",
    "view_as", "where", "zero_", "zeros", "zeros_like",
};

}  // namespace

bool counts_flops(std::string_view name) { return counted(name) != nullptr; }

std::vector<std::string_view> operators_without_matrix_work() {
  return {std::begin(kWithoutMatrixWork), std::end(kWithoutMatrixWork)};
}

bool without_matrix_work(std::string_view name) {
  // aten's operators only (a custom or quantized namespace's are not known to be cheap), an
  // overload name after the dot (aten::add.Tensor) the same operator
  constexpr std::string_view aten = "aten::";
  if (name.substr(0, aten.size()) != aten) return false;
  std::string_view base = name.substr(aten.size());
  base = base.substr(0, base.find('.'));
  return std::binary_search(std::begin(kWithoutMatrixWork), std::end(kWithoutMatrixWork), base);
}

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
