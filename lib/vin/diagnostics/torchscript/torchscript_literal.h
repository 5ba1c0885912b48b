// The values and signatures TorchScript prints into an archive's code/, read as text: a class's
// constants (`kernel_size : Final[Tuple[int, int]] = (3, 3)`) and its methods' signatures with
// their defaults (`def forward(self: __torch__.M, x: Tensor, k: int=3) -> Tensor:`). Nothing is
// compiled or run; anything outside the printed forms below is UnsupportedPickle, so that the
// caller falls back to LibTorch, which reads it.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>

#include "vin/diagnostics/torchscript/class_source.h"
#include "vin/diagnostics/records/model_metadata.h"
#include "vin/diagnostics/records/record_value.h"

namespace vin::diagnostics {

/// The value of item N of the archive's constants.pkl, as a record value: what a literal
/// `CONSTANTS.cN` (a string TorchScript could not print inline, a tensor) stands for.
using ArchiveConstant = std::function<Json(std::size_t index)>;

/// The record value (docs/records.md, attributes) of a printed literal: None, True, False,
/// integers, floats (`1.`, `1e-05`, `inf`, `nan`; non-finite as strings), string literals with
/// their escapes, tuples and lists of these (as arrays), `CONSTANTS.cN`, and `torch.device(...)`
/// (a type marker). Throws UnsupportedPickle for anything else.
Json parse_torchscript_literal(std::string_view text, const ArchiveConstant& constant);

/// The text of a string literal as TorchScript prints it (quoted with `"` or `'`; the escapes
/// `\\ \' \" \n \t \r \a \b \f \v` and octal `\ooo` for other control bytes). Throws
/// UnsupportedPickle for anything else.
std::string decode_string_literal(std::string_view literal);

/// The record of a method from its printed signature: the arguments after `self` with their
/// types as printed (Python's str(argument.type) spelling) and defaults, and the return type.
/// Throws UnsupportedPickle for a signature it cannot split (keyword-only markers, no return
/// type).
MethodSignature parse_method_signature(const MethodSource& method, const ArchiveConstant& constant);

}  // namespace vin::diagnostics
