// profile's FLOP rules against FlopCounterMode's formulas (torch/utils/flop_counter.py of
// PyTorch 2.6) worked by hand for each operator, and the latency statistics.
#include <doctest/doctest.h>

#include <limits>
#include <stdexcept>

#include "vin/diagnostics/profile/flop_rules.h"
#include "vin/diagnostics/profile/latency.h"

using namespace vin::diagnostics;

namespace {

OperatorCall call(std::string_view name, std::vector<std::optional<TensorShape>> arguments,
                  TensorShape output = {}, bool transposed = false) {
  return OperatorCall{name, std::move(arguments), std::move(output), transposed};
}

}  // namespace

TEST_CASE("matrix products count 2·m·n·k, batched ones 2·b·m·n·k, the added term not at all") {
  // nn.Linear(8, 3) on a batch of 4: addmm(bias[3], input[4, 8], weight.t()[8, 3])
  CHECK(operator_flops(call("aten::addmm", {TensorShape{3}, TensorShape{4, 8}, TensorShape{8, 3}})) ==
        2 * 4 * 3 * 8);
  CHECK(operator_flops(call("aten::mm", {TensorShape{5, 7}, TensorShape{7, 2}})) == 2 * 5 * 2 * 7);
  CHECK(operator_flops(call("aten::bmm", {TensorShape{6, 5, 7}, TensorShape{6, 7, 2}})) ==
        2 * 6 * 5 * 2 * 7);
  CHECK(operator_flops(call("aten::baddbmm", {TensorShape{6, 5, 2}, TensorShape{6, 5, 7},
                                              TensorShape{6, 7, 2}})) == 2 * 6 * 5 * 2 * 7);
  // an overload name is the same operator
  CHECK(operator_flops(call("aten::mm.default", {TensorShape{5, 7}, TensorShape{7, 2}})) == 140);
}

TEST_CASE("a convolution counts 2 · batch · weight elements · output positions; transposed, "
          "input positions") {
  // Conv2d(3, 16, 3, stride 2, groups 1) on 2x3x32x32 -> 2x16x15x15
  const OperatorCall conv = call("aten::convolution", {TensorShape{2, 3, 32, 32},
                                                       TensorShape{16, 3, 3, 3}, TensorShape{16}},
                                 {2, 16, 15, 15});
  CHECK(operator_flops(conv) == 2LL * 2 * (16 * 3 * 3 * 3) * (15 * 15));
  // depthwise: Conv2d(8, 8, 3, groups=8): weight [8, 1, 3, 3]
  CHECK(operator_flops(call("aten::_convolution", {TensorShape{1, 8, 10, 10},
                                                   TensorShape{8, 1, 3, 3}},
                            {1, 8, 8, 8})) == 2LL * 1 * (8 * 1 * 3 * 3) * (8 * 8));
  // ConvTranspose1d(4, 6, 5, stride 2): weight [4, 6, 5], input 3x4x7 -> output 3x6x17
  CHECK(operator_flops(call("aten::convolution", {TensorShape{3, 4, 7}, TensorShape{4, 6, 5}},
                            {3, 6, 17}, true)) == 2LL * 3 * (4 * 6 * 5) * 7);
  // 3d
  CHECK(operator_flops(call("aten::convolution", {TensorShape{1, 2, 4, 4, 4},
                                                  TensorShape{3, 2, 2, 2, 2}},
                            {1, 3, 3, 3, 3})) == 2LL * (3 * 2 * 8) * 27);
}

TEST_CASE("attention counts both products: 2·b·h·s_q·s_k·(d_q + d_v)") {
  const std::vector<std::optional<TensorShape>> qkv = {TensorShape{2, 4, 10, 8},
                                                       TensorShape{2, 4, 12, 8},
                                                       TensorShape{2, 4, 12, 6}};
  for (const char* name : {"aten::_scaled_dot_product_flash_attention_for_cpu",
                           "aten::_scaled_dot_product_efficient_attention",
                           "aten::_scaled_dot_product_flash_attention",
                           "aten::_scaled_dot_product_cudnn_attention"}) {
    CAPTURE(name);
    CHECK(operator_flops(call(name, qkv)) == 2LL * 2 * 4 * 10 * 12 * (8 + 6));
  }
}

TEST_CASE("every other operator, and a call of a shape the formula does not read, counts 0") {
  CHECK_FALSE(counts_flops("aten::linear"));  // its addmm counts, inside it
  CHECK_FALSE(counts_flops("aten::relu"));
  CHECK_FALSE(counts_flops("aten::matmul"));  // it dispatches to mm or bmm, which count
  CHECK(counts_flops("aten::addmm"));
  CHECK(operator_flops(call("aten::add", {TensorShape{4, 4}, TensorShape{4, 4}})) == 0);
  CHECK(operator_flops(call("aten::mm", {TensorShape{4, 4}, std::nullopt})) == 0);
  CHECK(operator_flops(call("aten::bmm", {TensorShape{4, 4}, TensorShape{4, 4}})) == 0);
  CHECK(operator_flops(call("aten::convolution", {TensorShape{1, 2, 4, 4}})) == 0);
  // no wrap-around: a count past INT64_MAX saturates
  const std::int64_t big = std::int64_t{1} << 40;
  CHECK(operator_flops(call("aten::mm", {TensorShape{big, big}, TensorShape{big, big}})) ==
        std::numeric_limits<std::int64_t>::max());
}

TEST_CASE("latency: median of an even count is the mean of the middle two; p90 is the nearest "
          "rank") {
  const LatencyStats ten = latency_stats({10, 1, 9, 2, 8, 3, 7, 4, 6, 5});
  CHECK(ten.min == 1);
  CHECK(ten.max == 10);
  CHECK(ten.median == 5.5);
  CHECK(ten.mean == 5.5);
  CHECK(ten.p90 == 9);  // ceil(0.9 · 10) = 9th smallest
  const LatencyStats one = latency_stats({4.25});
  CHECK(one.min == 4.25);
  CHECK(one.median == 4.25);
  CHECK(one.p90 == 4.25);
  CHECK(one.max == 4.25);
  const LatencyStats three = latency_stats({3, 1, 2});
  CHECK(three.median == 2);
  CHECK(three.p90 == 3);  // ceil(2.7) = 3rd
  CHECK_THROWS_AS(latency_stats({}), std::invalid_argument);
}
