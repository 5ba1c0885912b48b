// Bounded, detached samples of one tensor: the value side of a TensorSnapshot.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "vin/diagnostics/records/capture_records.h"

namespace vin::diagnostics {

/// Why a tensor's values cannot be sampled, in the order docs/capture.md gives ("nested_tensor",
/// "non_strided_layout", "meta_device", "quantized_dtype", "complex_dtype"), or nothing.
std::optional<std::string> sample_omission_reason(const at::Tensor& tensor);

/// A snapshot's `shape` and `numel`. For a nested tensor (which has no sizes of its own): the
/// number of components, then each further dimension's size where every component agrees and -1
/// where they differ (`[2, -1, 32]`), and the sum of the components' element counts.
std::pair<std::vector<std::int64_t>, std::int64_t> snapshot_shape(const at::Tensor& tensor);

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

/// A whole tensor as numpy can hold it (capture --save, compare): a contiguous copy on the CPU,
/// never sharing memory with `tensor` (which the forward may change later), with bfloat16 and
/// the float8 types as float32, complex32 as complex64 and quantized tensors dequantized to
/// float32. Nothing for metadata-only tensors (nested, non-strided, meta).
std::optional<at::Tensor> whole_copy(const at::Tensor& tensor);

/// The element size of `tensor`'s whole_copy, without making it.
std::int64_t saved_element_size(const at::Tensor& tensor);

/// Whether `tensor` holds a NaN or an infinity, checked on its own device: floating and complex
/// tensors, nested ones component by component; false for any other (integers, bool, quantized,
/// meta, sparse).
bool has_nonfinite(const at::Tensor& tensor);

}  // namespace vin::diagnostics
