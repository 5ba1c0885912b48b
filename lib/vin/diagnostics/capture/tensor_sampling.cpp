#include "vin/diagnostics/capture/tensor_sampling.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <tuple>

namespace vin::diagnostics {
namespace {

// The first `count` logical elements of a strided tensor as a 1-D tensor on its own device,
// copying only those elements: a contiguous tensor is narrowed; any other view gathers the
// elements by their storage offsets.
at::Tensor logical_prefix(const at::Tensor& t, std::int64_t count) {
  if (t.is_contiguous()) return t.reshape({-1}).narrow(0, 0, count);
  const auto sizes = t.sizes();
  const auto strides = t.strides();
  const std::size_t rank = sizes.size();
  std::vector<std::int64_t> index(rank, 0);
  std::vector<std::int64_t> offsets(static_cast<std::size_t>(count));
  std::int64_t max_offset = 0;
  for (std::int64_t k = 0; k < count; ++k) {
    std::int64_t offset = 0;
    for (std::size_t d = 0; d < rank; ++d) offset += index[d] * strides[d];
    offsets[static_cast<std::size_t>(k)] = offset;
    max_offset = std::max(max_offset, offset);
    for (std::size_t d = rank; d-- > 0;) {  // advance the row-major multi-index
      if (++index[d] < sizes[d]) break;
      index[d] = 0;
    }
  }
  const at::Tensor flat = t.as_strided({max_offset + 1}, {1}, t.storage_offset());
  const at::Tensor positions =
      at::tensor(offsets, at::TensorOptions().dtype(at::kLong)).to(t.device());
  return flat.index_select(0, positions);
}

// The first `count` logical elements of a strided CPU tensor, read in place (no tensor is made:
// at the snapshot quotas' sizes, building tensors cost more than the forward's own module calls).
// False for dtypes it does not read directly (the caller then copies through LibTorch).
bool read_cpu_prefix(const at::Tensor& t, std::int64_t count, std::vector<SampleValue>& out) {
  const auto sizes = t.sizes();
  const auto strides = t.strides();
  const std::size_t rank = sizes.size();
  const auto read = [&](auto* data, auto convert) {
    std::vector<std::int64_t> index(rank, 0);
    out.reserve(static_cast<std::size_t>(count));
    for (std::int64_t k = 0; k < count; ++k) {
      std::int64_t offset = 0;
      for (std::size_t d = 0; d < rank; ++d) offset += index[d] * strides[d];
      out.emplace_back(convert(data[offset]));
      for (std::size_t d = rank; d-- > 0;) {  // advance the row-major multi-index
        if (++index[d] < sizes[d]) break;
        index[d] = 0;
      }
    }
    return true;
  };
  const auto as_double = [](auto v) { return static_cast<double>(v); };
  const auto as_int = [](auto v) { return static_cast<std::int64_t>(v); };
  switch (t.scalar_type()) {
    case at::kFloat:
      return read(t.data_ptr<float>(), as_double);
    case at::kDouble:
      return read(t.data_ptr<double>(), as_double);
    case at::kHalf:
      return read(t.data_ptr<at::Half>(), [](at::Half v) { return static_cast<double>(float(v)); });
    case at::kBFloat16:
      return read(t.data_ptr<at::BFloat16>(),
                  [](at::BFloat16 v) { return static_cast<double>(float(v)); });
    case at::kLong:
      return read(t.data_ptr<std::int64_t>(), as_int);
    case at::kInt:
      return read(t.data_ptr<std::int32_t>(), as_int);
    case at::kShort:
      return read(t.data_ptr<std::int16_t>(), as_int);
    case at::kChar:
      return read(t.data_ptr<std::int8_t>(), as_int);
    case at::kByte:
      return read(t.data_ptr<std::uint8_t>(), as_int);
    case at::kBool:
      return read(t.data_ptr<bool>(), [](bool v) { return v; });
    default:
      return false;
  }
}

// Whether every element is finite. A NaN or an infinity anywhere makes the sum non-finite, so a
// finite sum (one vectorised pass, nothing allocated) answers for almost every tensor; only a
// non-finite sum (which large finite values can also give) needs the element-wise check.
bool all_finite(const at::Tensor& t) {
  if (t.numel() == 0) return true;
  const at::Tensor sum = t.sum();
  const bool finite_sum =
      t.is_complex() ? at::isfinite(sum).item<bool>() : std::isfinite(sum.item<double>());
  return finite_sum || at::isfinite(t).all().item<bool>();
}

}  // namespace

std::optional<std::string> sample_omission_reason(const at::Tensor& tensor) {
  if (tensor.is_nested()) return "nested_tensor";
  if (tensor.layout() != c10::kStrided) return "non_strided_layout";
  if (tensor.is_meta()) return "meta_device";
  if (tensor.is_quantized()) return "quantized_dtype";
  if (tensor.is_complex()) return "complex_dtype";
  return std::nullopt;
}

std::pair<std::vector<std::int64_t>, std::int64_t> snapshot_shape(const at::Tensor& tensor) {
  if (!tensor.is_nested()) return {tensor.sizes().vec(), tensor.numel()};
  // one row of sizes per component (a small int64 tensor on the CPU)
  const at::Tensor sizes = tensor._nested_tensor_size().to(at::kCPU).to(at::kLong).contiguous();
  const std::int64_t components = sizes.size(0);
  const std::int64_t rank = sizes.dim() == 2 ? sizes.size(1) : 0;
  const std::int64_t* row = sizes.data_ptr<std::int64_t>();
  std::vector<std::int64_t> shape{components};
  for (std::int64_t d = 0; d < rank; ++d) {
    std::int64_t size = components > 0 ? row[d] : -1;
    for (std::int64_t c = 1; c < components; ++c)
      if (row[c * rank + d] != size) size = -1;
    shape.push_back(size);
  }
  std::int64_t numel = 0;
  for (std::int64_t c = 0; c < components; ++c) {
    std::int64_t n = 1;
    for (std::int64_t d = 0; d < rank; ++d) n *= row[c * rank + d];
    numel += n;
  }
  return {shape, numel};
}

TensorSample sample_tensor(const at::Tensor& tensor, std::int64_t max_samples,
                           std::int64_t remaining_bytes) {
  TensorSample sample;
  if (!tensor.defined() || sample_omission_reason(tensor)) return sample;
  const std::int64_t element_size = static_cast<std::int64_t>(tensor.element_size());
  const std::int64_t count = std::min(
      {tensor.numel(), max_samples, std::max<std::int64_t>(0, remaining_bytes) / element_size});
  if (count <= 0) return sample;

  sample.sampled_bytes = count * element_size;
  if (tensor.is_cpu() && read_cpu_prefix(tensor, count, sample.values)) return sample;

  const at::Tensor prefix = logical_prefix(tensor.detach(), count).to(at::kCPU);
  sample.values.reserve(static_cast<std::size_t>(count));
  if (prefix.scalar_type() == at::kBool) {
    const at::Tensor b = prefix.contiguous();
    const bool* data = b.data_ptr<bool>();
    for (std::int64_t i = 0; i < count; ++i) sample.values.emplace_back(data[i]);
  } else if (at::isFloatingType(prefix.scalar_type())) {
    // every float16/bfloat16/float32 value is exactly representable as a double
    const at::Tensor d = prefix.to(at::kDouble).contiguous();
    const double* data = d.data_ptr<double>();
    for (std::int64_t i = 0; i < count; ++i) sample.values.emplace_back(data[i]);
  } else {
    const at::Tensor l = prefix.to(at::kLong).contiguous();
    const std::int64_t* data = l.data_ptr<std::int64_t>();
    for (std::int64_t i = 0; i < count; ++i) sample.values.emplace_back(data[i]);
  }
  return sample;
}

TensorStats tensor_stats(const at::Tensor& source) {
  TensorStats stats;
  if (!source.defined() || sample_omission_reason(source)) return stats;
  const at::Tensor t = source.detach();
  const auto count = [](const at::Tensor& mask) { return mask.sum().item<std::int64_t>(); };
  auto& e = stats.entries;
  if (t.scalar_type() == at::kBool) {
    e.emplace_back("true_count", count(t));
    return stats;
  }
  if (!at::isFloatingType(t.scalar_type())) {
    const bool empty = t.numel() == 0;
    e.emplace_back("min", empty ? StatValue(nullptr) : StatValue(t.min().item<std::int64_t>()));
    e.emplace_back("max", empty ? StatValue(nullptr) : StatValue(t.max().item<std::int64_t>()));
    e.emplace_back("mean", empty ? StatValue(nullptr)
                                 : StatValue(t.sum(at::kDouble).item<double>() /
                                             static_cast<double>(t.numel())));
    e.emplace_back("zero_count", count(t == 0));
    return stats;
  }
  const std::int64_t numel = t.numel();
  const std::int64_t zero_count = numel - at::count_nonzero(t).item<std::int64_t>();
  // aminmax has no CPU kernel for 16-bit floats; their values are exact in float32
  const auto widened = [](const at::Tensor& x) {
    return x.scalar_type() == at::kHalf || x.scalar_type() == at::kBFloat16 ? x.to(at::kFloat) : x;
  };
  StatValue min = nullptr, max = nullptr, mean = nullptr, std_dev = nullptr, abs_max = nullptr;
  std::int64_t nan_count = 0, inf_count = 0;
  const auto set_min_max = [&](const at::Tensor& values) {
    const auto [lo_t, hi_t] = at::aminmax(widened(values));  // exact in the values' own dtype
    const double lo = lo_t.item<double>(), hi = hi_t.item<double>();
    min = lo;
    max = hi;
    abs_max = std::max(std::abs(lo), std::abs(hi));
  };
  // mean and the unbiased variance in float64, two-pass as numpy computes them: a float64 copy
  // (LibTorch's float32 reductions accumulate in float32, 1e-8 off numpy), its sum, then the
  // squared deviations as a dot product (Welford's var_mean is three times slower)
  const auto set_moments = [&](const at::Tensor& values, std::int64_t n) {
    at::Tensor d = values.to(at::kDouble, /*non_blocking=*/false, /*copy=*/true).reshape({-1});
    const double m = d.sum().item<double>() / static_cast<double>(n);
    mean = m;
    if (n > 1 && std::isfinite(m)) {
      d.sub_(m);
      std_dev = std::sqrt(at::dot(d, d).item<double>() / static_cast<double>(n - 1));
    } else {
      std_dev = std::nan("");
    }
    return m;
  };
  if (numel > 0) {
    // no float32 or 16-bit value can make a float64 sum overflow, so a finite mean there also
    // says that every element is finite
    const double m = set_moments(t, numel);
    const bool finite = t.scalar_type() == at::kDouble ? all_finite(t) : std::isfinite(m);
    if (finite) {
      set_min_max(t);
    } else {
      // statistics over the finite elements only
      mean = nullptr;
      std_dev = nullptr;
      const at::Tensor mask = at::isfinite(t);
      const std::int64_t n = count(mask);
      nan_count = count(at::isnan(t));
      inf_count = count(at::isinf(t));
      if (n > 0) {
        const at::Tensor values = t.masked_select(mask);
        set_min_max(values);
        set_moments(values, n);
      }
    }
  }
  stats.nonfinite = nan_count + inf_count > 0;
  e = {{"min", min},
       {"max", max},
       {"mean", mean},
       {"std", std_dev},
       {"abs_max", abs_max},
       {"nan_count", nan_count},
       {"inf_count", inf_count},
       {"zero_count", zero_count}};
  return stats;
}

bool has_nonfinite(const at::Tensor& tensor) {
  if (!tensor.defined()) return false;
  if (tensor.is_nested()) {
    for (const at::Tensor& component : tensor.unbind())
      if (has_nonfinite(component)) return true;
    return false;
  }
  if (tensor.layout() != c10::kStrided || tensor.is_meta() || tensor.is_quantized()) return false;
  if (!at::isFloatingType(tensor.scalar_type()) && !at::isComplexType(tensor.scalar_type()))
    return false;
  return !all_finite(tensor.detach());
}

namespace {

// numpy has float16, float32 and float64: other floating types (bfloat16, LibTorch 2's float8
// types) are saved as float32, which holds each of their values exactly
bool needs_float32(c10::ScalarType type) {
  return c10::isFloatingType(type) && type != at::kHalf && type != at::kFloat &&
         type != at::kDouble;
}

}  // namespace

std::optional<at::Tensor> whole_copy(const at::Tensor& tensor) {
  if (tensor.is_nested() || tensor.layout() != c10::kStrided || tensor.is_meta())
    return std::nullopt;
  at::Tensor t = tensor.detach();
  if (t.is_quantized()) t = t.dequantize();
  if (needs_float32(t.scalar_type())) t = t.to(at::kFloat);
  if (t.scalar_type() == at::kComplexHalf) t = t.to(at::kComplexFloat);
  // a copy even when nothing above made one: the forward may change the tensor in place later
  return t.to(at::kCPU, t.scalar_type(), /*non_blocking=*/false, /*copy=*/true).contiguous();
}

std::int64_t saved_element_size(const at::Tensor& tensor) {
  if (tensor.is_quantized() || needs_float32(tensor.scalar_type())) return 4;
  if (tensor.scalar_type() == at::kComplexHalf) return 8;
  return static_cast<std::int64_t>(tensor.element_size());
}

}  // namespace vin::diagnostics
