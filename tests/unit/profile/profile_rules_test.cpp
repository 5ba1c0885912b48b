// profile's rules without LibTorch: the FLOP rules against FlopCounterMode's formulas
// (torch/utils/flop_counter.py of PyTorch 2.6) worked by hand for each operator, the latency
// statistics, the attribution of event sequences to modules and operators, the records' JSON.
#include <doctest/doctest.h>

#include <algorithm>
#include <fstream>
#include <limits>
#include <regex>
#include <sstream>
#include <stdexcept>

#include "vin/diagnostics/profile/chrome_trace.h"
#include "vin/diagnostics/tables/command_tables.h"
#include "vin/diagnostics/tables/text_table.h"
#include "vin/diagnostics/profile/flop_rules.h"
#include "vin/diagnostics/profile/latency.h"
#include "vin/diagnostics/profile/profile_builder.h"
#include "vin/diagnostics/json/json_encoding.h"

using namespace vin::diagnostics;

namespace {

OperatorCall call(std::string_view name, std::vector<std::optional<TensorShape>> arguments,
                  TensorShape output = {}, bool transposed = false) {
  return OperatorCall{name, std::move(arguments), std::move(output), transposed};
}

}  // namespace

TEST_CASE("matrix products count 2·m·n·k, batched ones 2·b·m·n·k, the added term not at all") {
  // nn.Linear(8, 3) on a batch of 4: addmm(bias[3], input[4, 8], weight.t()[8, 3])
  CHECK(operator_flops(call("aten::addmm", {TensorShape{3}, TensorShape{4, 8},
                                            TensorShape{8, 3}})) == 2 * 4 * 3 * 8);
  CHECK(operator_flops(call("aten::mm", {TensorShape{5, 7}, TensorShape{7, 2}})) == 2 * 5 * 2 * 7);
  CHECK(operator_flops(call("aten::bmm", {TensorShape{6, 5, 7}, TensorShape{6, 7, 2}})) ==
        2 * 6 * 5 * 2 * 7);
  CHECK(operator_flops(call("aten::baddbmm", {TensorShape{6, 5, 2}, TensorShape{6, 5, 7},
                                              TensorShape{6, 7, 2}})) == 2 * 6 * 5 * 2 * 7);
  // an overload name is the same operator
  CHECK(operator_flops(call("aten::mm.default", {TensorShape{5, 7}, TensorShape{7, 2}})) == 140);
}

TEST_CASE(
    "a convolution counts 2 · batch · weight elements · output positions; transposed, "
    "input positions") {
  // Conv2d(3, 16, 3, stride 2, groups 1) on 2x3x32x32 -> 2x16x15x15
  const OperatorCall conv =
      call("aten::convolution",
           {TensorShape{2, 3, 32, 32}, TensorShape{16, 3, 3, 3}, TensorShape{16}}, {2, 16, 15, 15});
  CHECK(operator_flops(conv) == 2LL * 2 * (16 * 3 * 3 * 3) * (15 * 15));
  // depthwise: Conv2d(8, 8, 3, groups=8): weight [8, 1, 3, 3]
  CHECK(operator_flops(call("aten::_convolution",
                            {TensorShape{1, 8, 10, 10}, TensorShape{8, 1, 3, 3}}, {1, 8, 8, 8})) ==
        2LL * 1 * (8 * 1 * 3 * 3) * (8 * 8));
  // ConvTranspose1d(4, 6, 5, stride 2): weight [4, 6, 5], input 3x4x7 -> output 3x6x17
  CHECK(operator_flops(call("aten::convolution", {TensorShape{3, 4, 7}, TensorShape{4, 6, 5}},
                            {3, 6, 17}, true)) == 2LL * 3 * (4 * 6 * 5) * 7);
  // 3d
  CHECK(operator_flops(call("aten::convolution",
                            {TensorShape{1, 2, 4, 4, 4}, TensorShape{3, 2, 2, 2, 2}},
                            {1, 3, 3, 3, 3})) == 2LL * (3 * 2 * 8) * 27);
}

TEST_CASE("attention counts both products: 2·b·h·s_q·s_k·(d_q + d_v)") {
  const std::vector<std::optional<TensorShape>> qkv = {
      TensorShape{2, 4, 10, 8}, TensorShape{2, 4, 12, 8}, TensorShape{2, 4, 12, 6}};
  for (const char* name :
       {"aten::_scaled_dot_product_flash_attention_for_cpu",
        "aten::_scaled_dot_product_efficient_attention",
        "aten::_scaled_dot_product_flash_attention", "aten::_scaled_dot_product_cudnn_attention"}) {
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
}

TEST_CASE("a count past INT64_MAX is exact, as Python's integers give it; past 2^127 overflowed") {
  // (2^40, 2^40) @ (2^40, 2^40): 2 · 2^120 = 2^121, which a meta tensor can ask for
  const std::int64_t big = std::int64_t{1} << 40;
  const FlopCount exact =
      operator_flops(call("aten::mm", {TensorShape{big, big}, TensorShape{big, big}}));
  CHECK(flop_digits(exact) == "2658455991569831745807614120560689152");
  CHECK_FALSE(fits_int64(exact));
  CHECK_FALSE(flops_overflowed(exact));
  CHECK(dump_line(flops_json(exact)) == "2658455991569831745807614120560689152");
  CHECK(dump_line(flops_json(FlopCount{1} << 63)) == "9223372036854775808");
  CHECK(dump_line(flops_json(FlopCount{9223372036854775807})) == "9223372036854775807");
  CHECK(si_count(exact) == "2658455.99 Q");
  CHECK(si_count(FlopCount{3630000000}) == "3.63 G");
  // (2^62, 2^62) @ (2^62, 2^62): 2^187 does not fit; it is overflowed, never wrapped
  const std::int64_t huge = std::int64_t{1} << 62;
  const FlopCount past =
      operator_flops(call("aten::mm", {TensorShape{huge, huge}, TensorShape{huge, huge}}));
  CHECK(flops_overflowed(past));
  CHECK(flops_overflowed(add_flops(exact, past)));
  CHECK(flops_overflowed(add_flops(kFlopsOverflowed - 1, 1)));
  CHECK_FALSE(flops_overflowed(add_flops(kFlopsOverflowed - 2, 1)));
  CHECK(flops_overflowed(multiply_flops(FlopCount{1} << 64, FlopCount{1} << 63)));
  CHECK(flops_json(past).is_null());
  CHECK(si_count(past) == "overflow");
  // the summary says so when any count overflowed (each is at most the forward's)
  ProfileSummary summary;
  summary.device = "meta";
  summary.flops = exact;
  CHECK(to_json(summary).count("flops_overflowed") == 0);
  CHECK(dump_line(to_json(summary)["flops"]) == "2658455991569831745807614120560689152");
  summary.flops = past;
  const Json j = to_json(summary);
  CHECK(j["flops"].is_null());
  CHECK(j["flops_overflowed"] == true);
  // the builder adds them up without wrapping
  ProfileBuilder b;
  b.enter_module("<root>", "Net", 0, {}, 0);
  for (int i = 0; i < 3; ++i) {
    b.start_operator("aten::mm", 0);
    b.end_operator(exact, 1);
  }
  b.exit_module({}, 2);
  CHECK(flop_digits(b.flops()) == flop_digits(multiply_flops(exact, 3)));
  CHECK(flop_digits(b.modules()[0].flops) == flop_digits(multiply_flops(exact, 3)));
  for (int i = 0; i < 64; ++i) {
    b.start_operator("aten::mm", 3);
    b.end_operator(exact, 4);
  }
  CHECK(flops_overflowed(b.flops()));
}

TEST_CASE(
    "latency: median of an even count is the mean of the middle two; p90 is the nearest "
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

TEST_CASE(
    "the builder: FLOPs once per dispatch stack, inclusive and self values per module, "
    "operators by time") {
  ProfileBuilder b;
  b.enter_module("<root>", "Net", 30, {{2, 8}}, 0);
  b.start_operator("aten::linear", 1);  // not counted itself; its addmm is
  b.start_operator("aten::addmm", 1.5);
  b.end_operator(100, 2.5);
  b.end_operator(0, 3);
  b.enter_module("a", "torch.nn.modules.conv.Conv2d", 20, {{1, 3, 8, 8}}, 4);
  b.start_operator("aten::convolution", 5);  // counted; the _convolution inside it is not
  b.start_operator("aten::_convolution", 5.5);
  b.end_operator(60, 6);
  b.end_operator(60, 7);
  b.exit_module({{1, 4, 6, 6}}, 8);
  b.start_operator("aten::relu", 8.5);
  b.end_operator(0, 9);
  b.exit_module({{2, 4}}, 10);

  const std::vector<ModuleProfile> modules = b.modules();
  REQUIRE(modules.size() == 2);
  const ModuleProfile& root = modules[0];
  CHECK(root.module_path == "<root>");
  CHECK(root.calls == 1);
  CHECK(root.parameters == 30);
  CHECK(root.input_shapes == Shapes{{2, 8}});
  CHECK(root.output_shapes == Shapes{{2, 4}});
  CHECK(root.flops == 160);
  CHECK(root.self_flops == 100);
  CHECK(root.time_ms == 10);
  CHECK(root.self_time_ms == 6);
  const ModuleProfile& a = modules[1];
  CHECK(a.flops == 60);
  CHECK(a.self_flops == 60);
  CHECK(a.time_ms == 4);
  CHECK(a.self_time_ms == 4);
  CHECK(a.output_shapes == Shapes{{1, 4, 6, 6}});
  CHECK(b.flops() == 160);

  const std::vector<OperatorProfile> ops = b.operators();
  REQUIRE(ops.size() == 3);  // the dispatched addmm and _convolution are not operators of the code
  CHECK(ops[0].name == "aten::convolution");
  CHECK(ops[0].flops == 60);
  CHECK(ops[0].time_ms == 2);
  CHECK(ops[1].name == "aten::linear");
  CHECK(ops[1].flops == 100);
  CHECK(ops[2].name == "aten::relu");
  CHECK(ops[2].calls == 1);
  CHECK(ops[2].flops == 0);
}

TEST_CASE(
    "the builder: memory allocated during a module's calls and its peak from each call's "
    "start; shapes of the first call, the largest peak of all calls") {
  ProfileBuilder b;
  b.enter_module("<root>", "Net", 0, {}, 0);
  b.memory(100);
  for (int call = 0; call < 2; ++call) {
    b.enter_module("block", "Block", 0, {{call + 1}}, 1);
    b.memory(50);
    b.memory(-30);
    b.memory(call == 0 ? 40 : 10);
    b.exit_module({{call + 1}}, 2);
    b.memory(call == 0 ? -60 : -30);
  }
  b.exit_module({}, 3);
  const std::vector<ModuleProfile> modules = b.modules();
  REQUIRE(modules.size() == 2);
  const ModuleProfile& block = modules[1];
  CHECK(block.calls == 2);
  CHECK(block.input_shapes == Shapes{{1}});
  CHECK(block.allocated_bytes == 90 + 60);
  CHECK(block.peak_bytes == 60);  // first call: 100 -> 150 -> 120 -> 160, from 100
  const ModuleProfile& root = modules[0];
  CHECK(root.allocated_bytes == 100 + 150);
  CHECK(root.peak_bytes == 160);
  CHECK(b.peak_bytes() == 160);
  CHECK_THROWS_AS(b.exit_module({}, 4), std::logic_error);
  CHECK_THROWS_AS(b.end_operator(0, 4), std::logic_error);
}

TEST_CASE("latency warnings: no warm-up, and a spread past 2x or a 20% variation") {
  CHECK(latency_warnings({1.0, 1.1, 1.05}, 3).empty());
  const auto cold = latency_warnings({1.0}, 0);
  REQUIRE(cold.size() == 1);
  CHECK(cold[0].rfind("--warmup 0: ", 0) == 0);
  const auto wide = latency_warnings({1.0, 1.0, 2.5}, 3);  // max 2.5x min
  REQUIRE(wide.size() == 1);
  CHECK(wide[0] ==
        "the timed forwards spread widely (min 1.000 ms, max 2.500 ms, coefficient of variation "
        "47%): other work on the machine, frequency scaling or too little warm-up; the median "
        "is the figure to compare, or run with more --runs");
  CHECK(latency_warnings({1.0, 1.9}, 3).size() == 1);  // under 2x, but a variation of 31%
  CHECK(latency_warnings({10.0, 10.5, 11.0, 10.2}, 3).empty());
  CHECK(latency_warnings({5.0}, 1).empty());  // one run: no spread
}

TEST_CASE("uncounted operators: work no rule counts, inside no counted operator, none inside") {
  ProfileBuilder b;
  b.enter_module("<root>", "Encoder", 10, {{2, 8}}, 0);
  // the fast path: a fused layer that dispatches counted products (not listed itself) and a
  // fused Linear with its ReLU, which no rule counts
  b.start_operator("aten::_transformer_encoder_layer_fwd", 1);
  b.start_operator("aten::addmm", 2);
  b.end_operator(100, 3);
  b.start_operator("aten::_addmm_activation", 4);
  b.start_operator("aten::relu_", 5);  // without matrix work
  b.end_operator(0, 6);
  b.end_operator(0, 7.5);
  b.start_operator("aten::_softmax", 8);  // an activation
  b.end_operator(0, 9);
  b.end_operator(0, 10);
  // a convolution's backend kernel, called inside a counted operator: covered by it
  b.start_operator("aten::_convolution", 11);
  b.start_operator("aten::mkldnn_convolution", 11.5);
  b.end_operator(0, 12);
  b.end_operator(50, 13);
  // a custom operator with nothing inside, and the fused Linear again, at the top
  b.start_operator("torchvision::roi_align", 14);
  b.end_operator(0, 16);
  b.start_operator("aten::_addmm_activation.default", 17);
  b.end_operator(0, 18);
  b.start_operator("aten::add.Tensor", 19);  // an overload of an operator on the list
  b.end_operator(0, 20);
  b.exit_module({{2, 8}}, 21);
  const auto uncounted = b.uncounted_operators();
  REQUIRE(uncounted.size() == 3);
  CHECK(uncounted[0].name == "aten::_addmm_activation");
  CHECK(uncounted[0].calls == 1);
  CHECK(uncounted[0].time_ms == 3.5);
  CHECK(uncounted[1].name == "torchvision::roi_align");  // 2 ms
  CHECK(uncounted[2].name == "aten::_addmm_activation.default");
  CHECK(b.flops() == 150);

  CHECK(without_matrix_work("aten::add.Tensor"));
  CHECK(without_matrix_work("aten::view"));
  CHECK(without_matrix_work("aten::zeros_like"));
  CHECK_FALSE(without_matrix_work("aten::_addmm_activation"));
  CHECK_FALSE(without_matrix_work("aten::mkldnn_rnn_layer"));
  CHECK_FALSE(without_matrix_work("quantized::add"));  // not aten's: not known to be cheap
  CHECK_FALSE(without_matrix_work("aten::"));
  CHECK_FALSE(without_matrix_work("view"));
  const auto listed = operators_without_matrix_work();
  CHECK(std::is_sorted(listed.begin(), listed.end()));
  CHECK(std::adjacent_find(listed.begin(), listed.end()) == listed.end());
  for (const std::string_view name : listed) CHECK_FALSE(counts_flops("aten::" + std::string(name)));
}

TEST_CASE("an exported program's nodes: operators around the dispatcher's, counting none") {
  // contract 12.3: each node an operator call named by its target; what the dispatcher calls
  // inside it is counted by the usual rules, once, and is the uncounted one where none counts
  ProfileBuilder b;
  b.enter_module("<root>", "Net", 10, {{2, 8}}, 0);
  b.start_operator("aten.convolution.default", 1, {}, /*graph_node=*/true);  // a counted name
  b.start_operator("aten::convolution", 2);
  b.start_operator("aten::_convolution", 3);
  b.end_operator(40, 4);
  b.end_operator(40, 5);
  b.end_operator(0, 6);
  b.start_operator("aten.linear.default", 7, {}, true);
  b.start_operator("aten::linear", 8);
  b.start_operator("aten::addmm", 9);
  b.end_operator(100, 10);
  b.end_operator(0, 11);
  b.end_operator(0, 12);
  b.start_operator("aten._addmm_activation.default", 13, {}, true);  // a fused kernel
  b.start_operator("aten::_addmm_activation", 14);
  b.end_operator(0, 15);
  b.end_operator(0, 16);
  b.start_operator("_operator.add", 17, {}, true);  // a symbolic integer's: nothing inside
  b.end_operator(0, 18);
  b.exit_module({{2, 8}}, 19);
  CHECK(b.flops() == 140);
  const auto operators = b.operators();
  REQUIRE(operators.size() == 4);  // the nodes only: what they dispatch is nested
  const auto flops_of = [&](const std::string& name) {
    for (const auto& o : operators)
      if (o.name == name) return o.flops;
    FAIL("no operator " << name);
    return FlopCount(0);
  };
  CHECK(flops_of("aten.convolution.default") == 40);
  CHECK(flops_of("aten.linear.default") == 100);
  CHECK(flops_of("_operator.add") == 0);
  const auto uncounted = b.uncounted_operators();
  REQUIRE(uncounted.size() == 1);
  CHECK(uncounted[0].name == "aten::_addmm_activation");
}

TEST_CASE("--module: operator records of the calls inside the selected modules only") {
  ProfileBuilder b;
  b.operators_inside_modules_only();
  b.start_operator("aten::addmm", 0);  // before any selected module: the FLOPs, no record
  b.end_operator(10, 1);
  b.enter_module("layer1", "Block", 0, {}, 2);
  b.start_operator("aten::relu", 3);
  b.end_operator(0, 4);
  b.exit_module({}, 5);
  b.start_operator("aten::relu", 6);  // after: no record
  b.end_operator(0, 7);
  const auto ops = b.operators();
  REQUIRE(ops.size() == 1);
  CHECK(ops[0].name == "aten::relu");
  CHECK(ops[0].calls == 1);
  CHECK(b.flops() == 10);
}

TEST_CASE("operators: self time without the operators they dispatch to; every call nested") {
  const auto run = [](ProfileBuilder& b) {
    b.enter_module("<root>", "Net", 0, {}, 0);
    b.start_operator("aten::linear", 1);
    b.start_operator("aten::t", 1.5);
    b.end_operator(0, 2);
    b.start_operator("aten::addmm", 2);
    b.end_operator(100, 5);
    b.end_operator(0, 6);
    b.start_operator("aten::addmm", 7);  // called by the code itself as well
    b.end_operator(50, 8);
    b.exit_module({}, 9);
  };
  ProfileBuilder outermost;
  run(outermost);
  auto ops = outermost.operators();
  REQUIRE(ops.size() == 2);
  CHECK(ops[0].name == "aten::linear");
  CHECK(ops[0].time_ms == 5);
  CHECK(ops[0].self_time_ms == 1.5);  // 5 less the t's 0.5 and the addmm's 3
  CHECK(ops[0].flops == 100);
  CHECK(ops[1].name == "aten::addmm");
  CHECK(ops[1].calls == 1);
  CHECK(ops[1].self_time_ms == 1);

  ProfileBuilder nested;
  nested.nested_operators();
  run(nested);
  ops = nested.operators();
  REQUIRE(ops.size() == 3);
  CHECK(ops[0].name == "aten::linear");
  CHECK(ops[1].name == "aten::addmm");
  CHECK(ops[1].calls == 2);  // inside linear and by the code
  CHECK(ops[1].time_ms == 4);
  CHECK(ops[1].flops == 150);
  CHECK(ops[2].name == "aten::t");
  CHECK(ops[2].calls == 1);
  CHECK(nested.flops() == 150);  // the forward's FLOPs are counted once either way
}

TEST_CASE("the instrumentation's cost: events counted per call, measured cost subtracted") {
  const auto forward = [](ProfileBuilder& b) {
    b.enter_module("<root>", "Net", 0, {}, 0);           // module event 1
    b.start_operator("aten::linear", 1);                 // operator event 1
    b.start_operator("aten::addmm", 2);                  // 2
    b.memory(64, 2.5);                                   // 3
    b.end_operator(10, 3);                               // 4
    b.end_operator(0, 4);                                // 5
    b.enter_module("act", "ReLU", 0, {}, 5);             // module event 2
    b.start_operator("aten::relu", 6);                   // 6
    b.end_operator(0, 7);                                // 7
    b.exit_module({}, 8);                                // module event 3
    b.exit_module({}, 10);                               // 4
  };
  ProfileBuilder b;
  b.subtract_instrumentation({0.1, 0.2});  // 0.1 ms a module event, 0.2 ms an operator event
  forward(b);
  CHECK(b.events().module == 4);
  CHECK(b.events().op == 7);
  const auto modules = b.modules();
  // act: its relu's start and end and its own exit: 3 - 0.4 - 0.1
  CHECK(modules[1].time_ms == doctest::Approx(2.5));
  CHECK(modules[1].self_time_ms == doctest::Approx(2.5));
  // the root's self: 7 ms outside act's call less its own events there (5 operator events, act's
  // entry and its own exit): 7 - 1.0 - 0.2; its whole time that and act's as taken
  CHECK(modules[0].self_time_ms == doctest::Approx(5.8));
  CHECK(modules[0].time_ms == doctest::Approx(8.3));
  const auto ops = b.operators();
  REQUIRE(ops[0].name == "aten::linear");
  // linear: 2 ms outside its addmm less its own 2 events (the addmm's start, its own end), then
  // the addmm's 1 ms less its memory report and end
  CHECK(ops[0].self_time_ms == doctest::Approx(1.6));
  CHECK(ops[0].time_ms == doctest::Approx(1.6 + 0.6));
  // never below 0, and a parent never below its children
  ProfileBuilder dear;
  dear.subtract_instrumentation({10, 10});
  forward(dear);
  for (const auto& m : dear.modules()) CHECK(m.time_ms == 0);
  for (const auto& o : dear.operators()) CHECK(o.time_ms == 0);

  // the measured costs: operator callbacks over the operator events, the rest over the module
  // events; a cost measured below 0 (noise) is none
  const InstrumentationCost cost = measured_instrumentation_cost(
      {/*plain*/ 1.0, /*bare*/ 1.2, /*operators*/ 2.2, /*fully*/ 3.0}, {0, 100}, {8, 100});
  CHECK(cost.operator_event_ms == doctest::Approx(0.01));
  CHECK(cost.module_event_ms == doctest::Approx((0.8 + 0.2) / 8));
  const InstrumentationCost none = measured_instrumentation_cost({1, 0.9, 0.8, 0.7}, {0, 5}, {2, 5});
  CHECK(none.operator_event_ms == 0);
  CHECK(none.module_event_ms == 0);
}

TEST_CASE("where a forward raised: the module call left open, the operator an exception left") {
  ProfileBuilder b;
  CHECK_FALSE(b.where_raised());
  b.enter_module("<root>", "Net", 0, {}, 0);
  b.enter_module("bad", "torch.nn.modules.linear.Linear", 0, {}, 1);
  b.start_operator("aten::linear", 2);
  b.start_operator("aten::addmm", 3);
  b.end_operator(0, 4, /*raised=*/true);  // the exception leaves addmm, then linear
  b.end_operator(0, 5, /*raised=*/true);
  CHECK(b.where_raised() ==
        "in module 'bad' (torch.nn.modules.linear.Linear), in operator aten::linear (at its "
        "aten::addmm)");
  // raised by the code itself (a `raise`, no operator): the module call still open
  ProfileBuilder code;
  code.enter_module("<root>", "Net", 0, {}, 0);
  code.start_operator("aten::relu", 1);
  code.end_operator(0, 2);
  code.enter_module("check", "pkg.Check", 0, {}, 3);
  CHECK(code.where_raised() == "in module 'check' (pkg.Check)");
}

TEST_CASE("a module's uncalled children and the operators its own code called instead") {
  ProfileBuilder b;
  b.enter_module("<root>", "Encoder", 0, {}, 0);
  b.enter_module("layers.0", "TransformerEncoderLayer", 0, {}, 1);
  b.start_operator("aten::relu", 1.1);  // no matrix work
  b.end_operator(0, 1.2);
  b.start_operator("aten::_transformer_encoder_layer_fwd", 1.5);
  b.start_operator("aten::addmm", 2);
  b.end_operator(64, 3);
  b.end_operator(0, 4);
  b.exit_module({}, 5);
  b.exit_module({}, 6);
  std::vector<ModuleProfile> modules = b.modules();
  CHECK(modules[1].work_operators == std::vector<std::string>{"aten::_transformer_encoder_layer_fwd"});
  const std::vector<std::string> registered = {
      "<root>", "layers", "layers.0", "layers.0.self_attn", "layers.0.self_attn.out_proj",
      "layers.0.linear1", "norm", "unused", "unused.inner"};
  mark_uncalled_children(modules, registered, [](const std::string&) { return true; });
  CHECK(modules[0].uncalled_children == std::vector<std::string>{"norm", "unused"});
  CHECK(modules[1].uncalled_children == std::vector<std::string>{"self_attn", "linear1"});
  const Json j = to_json(modules[1]);
  CHECK(j.at("called_instead") == Json::array({"aten::_transformer_encoder_layer_fwd"}));
  // --module: a child with no selected module in it is not known to be uncalled
  modules = b.modules();
  mark_uncalled_children(modules, registered,
                         [](const std::string& path) { return path.rfind("layers", 0) == 0; });
  CHECK(modules[0].uncalled_children.empty());
  CHECK(modules[1].uncalled_children == std::vector<std::string>{"self_attn", "linear1"});
  CHECK(to_json(modules[0]).count("uncalled_children") == 0);
}

TEST_CASE("docs/profile.md lists the operators without matrix work the code knows") {
  std::ifstream in(VIN_SOURCE_DIR "/docs/profile.md");
  REQUIRE(in);
  std::ostringstream text;
  text << in.rdbuf();
  const std::string docs = text.str();
  const std::size_t from = docs.find("The operators without matrix work");
  const std::size_t to = docs.find("\n## ", from);
  REQUIRE(from != std::string::npos);
  const std::string section = docs.substr(from, to - from);
  std::vector<std::string> documented;
  const std::regex name("`([A-Za-z_0-9]+)`");
  for (auto it = std::sregex_iterator(section.begin(), section.end(), name);
       it != std::sregex_iterator(); ++it)
    documented.push_back((*it)[1]);
  std::vector<std::string> code;
  for (const std::string_view n : operators_without_matrix_work()) code.emplace_back(n);
  CHECK(documented == code);
}

TEST_CASE("profile records as JSON: the contract's fields in its order") {
  ModuleProfile m;
  m.module_path = "conv1";
  m.module_type = "torch.nn.modules.conv.Conv2d";
  m.calls = 1;
  m.parameters = 9408;
  m.input_shapes = {{1, 3, 32, 32}};
  m.output_shapes = {{1, 64, 16, 16}};
  m.flops = 4816896;
  m.self_flops = 4816896;
  m.time_ms = 0.5;
  m.self_time_ms = 0.25;
  m.allocated_bytes = 65536;
  m.peak_bytes = 65536;
  CHECK(dump_record_line("ModuleProfile", to_json(m)) ==
        R"({"record": "ModuleProfile", "module_path": "conv1", "module_type": )"
        R"("torch.nn.modules.conv.Conv2d", "calls": 1, "parameters": 9408, "input_shapes": )"
        R"([[1, 3, 32, 32]], "output_shapes": [[1, 64, 16, 16]], "flops": 4816896, )"
        R"("macs": 2408448, "self_flops": 4816896, "time_ms": 0.5, "self_time_ms": 0.25, "allocated_bytes": )"
        R"(65536, "peak_bytes": 65536})");
  CHECK(
      dump_record_line("OperatorProfile", to_json(OperatorProfile{"aten::linear", 2, 384, 1.0, 0.25})) ==
      R"({"record": "OperatorProfile", "operator": "aten::linear", "calls": 2, "flops": 384, )"
      R"("macs": 192, "time_ms": 1.0, "self_time_ms": 0.25})");
}

TEST_CASE("spans: a module call's and its operators', and Chrome trace events in start order") {
  ProfileBuilder b;
  b.keep_spans();
  b.enter_module("<root>", "pkg.Net", 12, {{2, 3}}, 0.0);
  b.start_operator("aten::linear", 0.0, {{2, 3}, {4, 3}, {4}});
  b.start_operator("aten::addmm", 0.1, {{4}, {2, 3}, {3, 4}});
  b.end_operator(48, 0.4);
  b.end_operator(0, 0.5);
  b.enter_module("act", "torch.nn.modules.activation.ReLU", 0, {{2, 4}}, 0.6);
  b.start_operator("aten::relu", 0.7, {{2, 4}});
  b.end_operator(0, 0.8);
  b.exit_module({{2, 4}}, 0.9);
  b.exit_module({{2, 4}}, 1.0);
  const auto& spans = b.spans();
  REQUIRE(spans.size() == 4);  // the dispatched aten::addmm is no span of its own
  CHECK(spans[0].name == "aten::linear");
  CHECK(spans[0].flops == 48);
  CHECK(spans[0].input_shapes == Shapes{{2, 3}, {4, 3}, {4}});
  CHECK(spans[2].name == "act");
  CHECK(spans[2].duration_ms == doctest::Approx(0.3));
  CHECK(spans[3].name == "<root>");
  CHECK(spans[3].flops == 48);
  CHECK(spans[3].output_shapes == Shapes{{2, 4}});
  ProfileSummary summary;
  summary.device = "cpu";
  // the forwards before it on their own track, the instrumented one around its calls; the
  // memory counter's samples out of order (allocations reported from other threads)
  std::vector<ProfileSpan> all = {{ProfileSpan::Kind::run, "timed run 1", "", -2.0, 1.5, {}, {}, 0},
                                  {ProfileSpan::Kind::run, kInstrumentedForward, "", 0.0, 1.0,
                                   {}, {}, 0}};
  all.insert(all.end(), spans.begin(), spans.end());
  b.device_synchronised(1.0, 1.0);  // spans are kept: a sync span
  REQUIRE(b.spans().back().kind == ProfileSpan::Kind::sync);
  const std::string trace =
      chrome_trace_json(all, {{0.5, 64}, {0.2, 128}}, "net.pt", summary);
  const Json doc = Json::parse(trace);
  const Json& events = doc.at("traceEvents");
  REQUIRE(events.size() == 3 + 6 + 2);
  // process and thread names first (metadata events)
  CHECK(events[0].at("ph") == "M");
  CHECK(events[0].at("name") == "process_name");
  CHECK(events[0].at("args").at("name") == "vin-inspect profile net.pt");
  CHECK(events[1].at("name") == "thread_name");
  CHECK(events[1].at("tid") == 1);
  CHECK(events[2].at("tid") == 2);
  // then by start; the enclosing span before the one that starts with it
  CHECK(events[3].at("name") == "timed run 1");
  CHECK(events[3].at("tid") == 2);
  CHECK(events[4].at("name") == kInstrumentedForward);
  CHECK(events[4].at("tid") == 1);
  CHECK(events[4].at("cat") == "forward");
  CHECK(events[5].at("name") == "<root>");
  CHECK(events[6].at("name") == "aten::linear");
  CHECK(events[7].at("name") == "act");
  CHECK(events[8].at("name") == "aten::relu");
  CHECK(events[5].at("ph") == "X");
  CHECK(events[5].at("cat") == "module");
  CHECK(events[5].at("dur").get<double>() == doctest::Approx(1000.0));  // microseconds
  CHECK(events[8].at("ts").get<double>() == doctest::Approx(700.0));
  CHECK(events[6].at("args").at("flops") == 48);
  // the counter track by time
  CHECK(events[9].at("ph") == "C");
  CHECK(events[9].at("ts").get<double>() == doctest::Approx(200.0));
  CHECK(events[9].at("args").at("bytes") == 128);
  CHECK(events[10].at("args").at("bytes") == 64);
  CHECK(doc.at("otherData").at("archive") == "net.pt");
}
