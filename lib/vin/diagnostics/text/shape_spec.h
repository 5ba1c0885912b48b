// `--shape NAME=D1xD2x...[:DTYPE]` (capture, compare): forward's arguments made from shapes
// (docs/inputs.md), as the command line gives them.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace vin::diagnostics {

/// One `--shape NAME=D1xD2x...[:DTYPE]`: forward's argument NAME as a tensor made from a seeded
/// generator (docs/inputs.md).
struct ShapeSpec {
  std::string name;
  std::vector<std::int64_t> shape;  ///< empty: a 0-d tensor ("NAME=" with no dimensions)
  std::string dtype = "float32";    ///< torch's dtype name without "torch."
  std::string text;                 ///< as the option gave it ("x=1x3x224x224")
  std::uint64_t bytes = 0;          ///< what the tensor holds: below 2^63, LibTorch's bound
};

/// The most bytes the `--shape` tensors of one forward may hold together (16 GiB), checked
/// before anything is allocated.
inline constexpr std::uint64_t kMaxShapeBytes = std::uint64_t{16} << 30;

/// Parses `--shape` text; throws UsageError saying what is wrong (each dimension a
/// non-negative integer, the tensor's bytes within int64, which LibTorch counts them in).
ShapeSpec parse_shape_spec(const std::string& text);

/// Inputs made from shapes (capture and compare --shape, --int-high; they are drawn from the
/// generator --seed seeds, ForwardRun::seed).
struct ShapedInputs {
  std::vector<ShapeSpec> shapes;
  std::int64_t int_high = 2;  ///< integer dtypes: torch.randint(0, int_high)
};

/// Checks what parse_shape_spec cannot see alone: where the tensors are `allocated` (every
/// device but meta, whose tensors have no storage), each tensor's bytes and their sum within
/// kMaxShapeBytes; `int_high` within what each integer dtype holds (torch.randint(0, high,
/// dtype=torch.int8) needs high <= 128). Throws UsageError naming the option and the value.
void check_shaped_inputs(const ShapedInputs& shaped, bool allocated = true);

/// `--seed` as torch.manual_seed reads it: an integer in [-2**63, 2**64 - 1], a negative one
/// taken as its 64-bit two's complement. Throws UsageError repeating the text otherwise.
std::uint64_t parse_seed(const std::string& text);

}  // namespace vin::diagnostics
