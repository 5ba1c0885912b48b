// Bounded, detached samples of one tensor: the value side of a TensorSnapshot.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "vin/diagnostics/capture_records.h"

namespace vin::diagnostics {

/// Python's str(dtype) for a LibTorch scalar type: "torch.float32", "torch.quint8", ...
std::string python_dtype_name(c10::ScalarType type);

/// Why a tensor's values cannot be sampled, in the contract's order of checks
/// ("non_strided_layout", "meta_device", "quantized_dtype", "complex_dtype"), or nothing.
std::optional<std::string> sample_omission_reason(const at::Tensor& tensor);

/// A tensor's values and the bytes they represent.
struct TensorSample {
  std::vector<SampleValue> values;
  std::int64_t sampled_bytes = 0;
};

/// The first min(numel, max_samples, floor(remaining_bytes / element_size)) elements of `tensor`
/// in row-major logical order (views are read in logical order), copied to the CPU. Only those
/// elements are copied, wherever the tensor lives. Omitted or empty tensors give no values.
TensorSample sample_tensor(const at::Tensor& tensor, std::int64_t max_samples,
                           std::int64_t remaining_bytes);

/// Statistics over the whole tensor, computed on its own device (capture --stats): see
/// TensorStats. Floating statistics cover the finite elements and are null when there are none;
/// std is the unbiased one, as torch.std's default. Nothing for metadata-only tensors.
TensorStats tensor_stats(const at::Tensor& tensor);

}  // namespace vin::diagnostics
