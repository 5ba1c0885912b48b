// The Python functions an exported graph calls on symbolic numbers (contract 12.1): `_operator.add`,
// `sub`, `mul`, `floordiv`, `truediv`, `mod`, `pow`, `neg`, `pos`, `abs`, the comparisons,
// `and_`, `or_`, `not_`, and torch's `sym_max`, `sym_min`, `sym_not`, `sym_float`, `sym_int`,
// `math.ceil`, `math.floor`, `math.trunc`, in Python's semantics (floor division and modulo
// floor; an int and a float give a float; True is 1). And the tensor properties a graph reads
// into symbols: aten.sym_size.int, sym_numel, sym_stride.int, sym_storage_offset.
#pragma once

#include <ATen/core/ivalue.h>

#include <optional>
#include <string>
#include <vector>

namespace vin::diagnostics::export_run {

/// Whether `target` is a Python function this runner computes.
bool is_python_operator(const std::string& target);

/// Whether `target` takes `count` arguments.
bool python_operator_arity_fits(const std::string& target, std::size_t count);

/// Python's result of `target` on `args` (ints, floats or bools). Throws Error for a division
/// by zero, as Python raises ZeroDivisionError, naming the operation.
c10::IValue apply_python_operator(const std::string& target, const std::vector<c10::IValue>& args);

/// "size", "numel", "stride" or "storage_offset" for the aten operator a graph reads a tensor's
/// property with (`torch.ops.aten.sym_size.int`, ...); nothing for any other target.
std::optional<std::string> tensor_property(const std::string& target);

/// The property `name` of args[0] (args[1]: the dimension, negative from the end). Throws Error
/// for a dimension the tensor has not.
c10::IValue read_tensor_property(const std::string& name, const std::vector<c10::IValue>& args);

}  // namespace vin::diagnostics::export_run
