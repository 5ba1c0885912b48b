// The FLOP count of one operator call, as profile attributes it (contract 8): the formulas of
// torch.utils.flop_counter.FlopCounterMode (PyTorch 2.6) for forward operators, from the shapes
// of the call's tensors alone. One multiply-add is 2 FLOPs; bias additions are not counted.
// Nothing here depends on LibTorch: the LibTorch side reads the shapes off the call's arguments
// and asks here.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "vin/diagnostics/records/flop_count.h"

namespace vin::diagnostics {

using TensorShape = std::vector<std::int64_t>;

/// One call of an operator: its schema name (`aten::addmm`), the shape of each argument in schema
/// order (nothing for an argument that is not a tensor, or absent), the shape of its first output
/// and, for a convolution, whether it is transposed (its `transposed` argument).
struct OperatorCall {
  std::string_view name;
  std::vector<std::optional<TensorShape>> arguments;
  TensorShape output;
  bool transposed = false;
};

/// Whether profile counts FLOPs for the operator `name`: aten::mm, addmm, bmm, baddbmm,
/// convolution, _convolution and the scaled-dot-product attention kernels (the ones
/// FlopCounterMode counts, and aten::_scaled_dot_product_flash_attention_for_cpu, which it
/// misses). Every other operator counts 0. Only the outermost counted operator of a dispatch
/// stack counts (the caller's rule).
bool counts_flops(std::string_view name);

/// Whether `name` is on the list of operators without matrix work (docs/profile.md): views and
/// shape changes, copies and tensor creation, element-wise arithmetic and comparisons,
/// reductions, normalisation, activations, pooling and resampling, indexing, dropout. An operator
/// counted by no rule and not on this list, with no counted operator inside it or around it, is
/// an uncounted operator: its work is missing from the FLOPs (a fused kernel such as the
/// TransformerEncoder fast path's aten::_addmm_activation, quantized and custom operators;
/// contract 9.3).
bool without_matrix_work(std::string_view name);

/// The list without_matrix_work reads: aten operators' names without `aten::`, sorted
/// (docs/profile.md prints it; a test holds the two together).
std::vector<std::string_view> operators_without_matrix_work();

/// The FLOPs of `call`: 0 for an operator counts_flops refuses, and for a call whose shapes are
/// not the ones the formula reads (a missing argument, a rank the operator does not take: such
/// a call raised in LibTorch before it could run). Exact past INT64_MAX (FlopCount).
FlopCount operator_flops(const OperatorCall& call);

}  // namespace vin::diagnostics
