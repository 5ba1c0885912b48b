#include <ATen/ATen.h>

#include <cmath>
#include <limits>

#include "vin/diagnostics/capture/tensor_sampling.h"
#include "vin/diagnostics/torch/dtype_names.h"

#include "doctest_after_torch.h"  // last: after glog's CHECK macros

using namespace vin::diagnostics;

namespace {

std::vector<double> doubles(const TensorSample& s) {
  std::vector<double> out;
  for (const auto& v : s.values) out.push_back(std::get<double>(v));
  return out;
}

}  // namespace

TEST_CASE("values are a row-major prefix of the logical elements, views included") {
  const at::Tensor x = at::arange(12, at::kFloat).reshape({3, 4});
  CHECK(doubles(sample_tensor(x, 5, 1000)) == std::vector<double>{0, 1, 2, 3, 4});
  CHECK(doubles(sample_tensor(x.t(), 5, 1000)) == std::vector<double>{0, 4, 8, 1, 5});
  CHECK(doubles(sample_tensor(x.select(1, 2), 32, 1000)) == std::vector<double>{2, 6, 10});
  CHECK(doubles(sample_tensor(x.narrow(0, 1, 2).narrow(1, 1, 2), 32, 1000)) ==
        std::vector<double>{5, 6, 9, 10});
  CHECK(doubles(sample_tensor(at::arange(3, at::kFloat).expand({2, 3}), 32, 1000)) ==
        std::vector<double>{0, 1, 2, 0, 1, 2});
  CHECK(doubles(sample_tensor(at::scalar_tensor(2.5, at::kDouble), 32, 1000)) ==
        std::vector<double>{2.5});
}

TEST_CASE("only the sampled elements are copied, however large the tensor") {
  // 2^40 logical elements (4 TiB as float32) over one stored element: copying the tensor, or
  // even materialising its index space, would not finish; sampling reads 32 elements
  const at::Tensor huge = at::full({1}, 3.0f).expand({std::int64_t{1} << 40});
  const auto s = sample_tensor(huge, 32, 1 << 14);
  CHECK(s.values.size() == 32);
  CHECK(std::get<double>(s.values[31]) == 3.0);
  const at::Tensor huge_2d = at::arange(4, at::kFloat).expand({std::int64_t{1} << 30, 4}).t();
  CHECK(doubles(sample_tensor(huge_2d, 3, 1 << 14)) == std::vector<double>{0, 0, 0});
}

TEST_CASE("the count obeys max_samples and the bytes left") {
  const at::Tensor x = at::ones({10}, at::kFloat);
  CHECK(sample_tensor(x, 32, 1000).values.size() == 10);
  CHECK(sample_tensor(x, 3, 1000).values.size() == 3);
  CHECK(sample_tensor(x, 3, 1000).sampled_bytes == 12);
  CHECK(sample_tensor(x, 32, 9).values.size() == 2);  // floor(9 / 4)
  CHECK(sample_tensor(x, 32, 3).values.empty());
  CHECK(sample_tensor(x, 32, 3).sampled_bytes == 0);
  CHECK(sample_tensor(at::ones({0, 3}), 32, 1000).values.empty());
}

TEST_CASE("each dtype's values are exact") {
  const auto h = sample_tensor(at::tensor({0.1f}).to(at::kHalf), 1, 100);
  CHECK(std::get<double>(h.values[0]) == static_cast<double>(c10::Half(0.1f)));
  CHECK(h.sampled_bytes == 2);
  const auto b = sample_tensor(at::tensor({0.1f}).to(at::kBFloat16), 1, 100);
  CHECK(std::get<double>(b.values[0]) ==
        static_cast<double>(static_cast<float>(c10::BFloat16(0.1f))));
  const std::int64_t big = (std::int64_t{1} << 53) + 1;
  const auto l = sample_tensor(at::tensor({big, std::numeric_limits<std::int64_t>::min()}), 2, 100);
  CHECK(std::get<std::int64_t>(l.values[0]) == big);
  CHECK(std::get<std::int64_t>(l.values[1]) == std::numeric_limits<std::int64_t>::min());
  const auto u = sample_tensor(at::tensor({255}, at::kByte), 1, 100);
  CHECK(std::get<std::int64_t>(u.values[0]) == 255);
  const auto flags = sample_tensor(at::tensor({1, 0}).to(at::kBool), 2, 100);
  CHECK(std::get<bool>(flags.values[0]));
  CHECK(!std::get<bool>(flags.values[1]));
  CHECK(flags.sampled_bytes == 2);
  const auto nf = sample_tensor(
      at::tensor({std::nan(""), std::numeric_limits<double>::infinity()}, at::kFloat), 2, 100);
  CHECK(std::isnan(std::get<double>(nf.values[0])));
  CHECK(std::isinf(std::get<double>(nf.values[1])));
}

TEST_CASE("omission reasons, in docs/capture.md's order") {
  const at::Tensor x = at::ones({2, 2});
  CHECK(sample_omission_reason(x) == std::nullopt);
  CHECK(sample_omission_reason(x.to_sparse()) == "non_strided_layout");
  CHECK(sample_omission_reason(at::empty({2}, at::TensorOptions().device(at::kMeta))) ==
        "meta_device");
  CHECK(sample_omission_reason(at::quantize_per_tensor(x, 0.1, 0, at::kQUInt8)) ==
        "quantized_dtype");
  CHECK(sample_omission_reason(at::ones({2}, at::kComplexFloat)) == "complex_dtype");
  // sparse wins over complex, meta wins over complex
  CHECK(sample_omission_reason(at::ones({2}, at::kComplexFloat).to_sparse()) ==
        "non_strided_layout");
  CHECK(sample_omission_reason(at::empty(
            {2}, at::TensorOptions().device(at::kMeta).dtype(at::kComplexFloat))) == "meta_device");
  CHECK(sample_tensor(x.to_sparse(), 32, 100).values.empty());
}

TEST_CASE("Python's dtype names") {
  CHECK(python_dtype_name(at::kFloat) == "torch.float32");
  CHECK(python_dtype_name(at::kHalf) == "torch.float16");
  CHECK(python_dtype_name(at::kBFloat16) == "torch.bfloat16");
  CHECK(python_dtype_name(at::kLong) == "torch.int64");
  CHECK(python_dtype_name(at::kByte) == "torch.uint8");
  CHECK(python_dtype_name(at::kChar) == "torch.int8");
  CHECK(python_dtype_name(at::kBool) == "torch.bool");
  CHECK(python_dtype_name(at::kComplexFloat) == "torch.complex64");
  CHECK(python_dtype_name(at::kQUInt8) == "torch.quint8");
  CHECK(python_dtype_name(at::kQInt32) == "torch.qint32");
}

namespace {

StatValue stat(const TensorStats& s, const std::string& name) {
  for (const auto& [n, v] : s.entries)
    if (n == name) return v;
  throw std::runtime_error("no stat " + name);
}

}  // namespace

TEST_CASE("tensor statistics per dtype kind, over finite elements") {
  const auto inf = std::numeric_limits<float>::infinity();
  const TensorStats f = tensor_stats(at::tensor({1.0f, -3.0f, 0.0f, std::nanf(""), inf, 2.0f}));
  std::vector<std::string> names;
  for (const auto& e : f.entries) names.push_back(e.first);
  CHECK(names == std::vector<std::string>{"min", "max", "mean", "std", "abs_max", "nan_count",
                                          "inf_count", "zero_count"});
  CHECK(std::get<double>(stat(f, "min")) == -3.0);
  CHECK(std::get<double>(stat(f, "max")) == 2.0);
  CHECK(std::get<double>(stat(f, "mean")) == 0.0);
  CHECK(std::get<double>(stat(f, "std")) == doctest::Approx(std::sqrt(14.0 / 3.0)));
  CHECK(std::get<double>(stat(f, "abs_max")) == 3.0);
  CHECK(std::get<std::int64_t>(stat(f, "nan_count")) == 1);
  CHECK(std::get<std::int64_t>(stat(f, "inf_count")) == 1);
  CHECK(std::get<std::int64_t>(stat(f, "zero_count")) == 1);
  CHECK(f.nonfinite);

  const TensorStats all_nan = tensor_stats(at::full({3}, std::nan(""), at::kFloat));
  CHECK(std::holds_alternative<std::nullptr_t>(stat(all_nan, "min")));
  CHECK(std::holds_alternative<std::nullptr_t>(stat(all_nan, "std")));
  const TensorStats one = tensor_stats(at::tensor({5.0}));
  CHECK(std::isnan(std::get<double>(stat(one, "std"))));  // unbiased std of one element
  CHECK(!one.nonfinite);

  const TensorStats ints = tensor_stats(at::tensor({3, 0, -7}));
  CHECK(ints.entries.size() == 4);
  CHECK(std::get<std::int64_t>(stat(ints, "min")) == -7);
  CHECK(std::get<double>(stat(ints, "mean")) == doctest::Approx(-4.0 / 3.0));
  CHECK(std::get<std::int64_t>(stat(ints, "zero_count")) == 1);
  CHECK(
      std::holds_alternative<std::nullptr_t>(stat(tensor_stats(at::zeros({0}, at::kLong)), "min")));

  const TensorStats flags = tensor_stats(at::tensor({1, 0, 1}).to(at::kBool));
  CHECK(flags.entries.size() == 1);
  CHECK(std::get<std::int64_t>(stat(flags, "true_count")) == 2);

  CHECK(tensor_stats(at::ones({2}, at::kComplexFloat)).entries.empty());
  CHECK(tensor_stats(at::ones({2}).to_sparse()).entries.empty());
}
