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
};

/// Parses `--shape` text; throws UsageError saying what is wrong.
ShapeSpec parse_shape_spec(const std::string& text);

/// Inputs made from shapes (capture and compare --shape, --seed, --int-high).
struct ShapedInputs {
  std::vector<ShapeSpec> shapes;
  std::uint64_t seed = 0;     ///< as torch.manual_seed(seed)
  std::int64_t int_high = 2;  ///< integer dtypes: torch.randint(0, int_high)
};

}  // namespace vin::diagnostics
