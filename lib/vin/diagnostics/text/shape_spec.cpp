#include "vin/diagnostics/text/shape_spec.h"

#include <algorithm>
#include <limits>
#include <string_view>
#include <utility>

#include "vin/diagnostics/records/error.h"
#include "vin/diagnostics/text/dtypes.h"

namespace vin::diagnostics {

ShapeSpec parse_shape_spec(const std::string& text) {
  const auto bad = [&](const std::string& why) {
    return UsageError("--shape " + text + ": " + why +
                      " (NAME=D1xD2x...[:DTYPE], e.g. x=1x3x224x224 or ids=2x16:int64)");
  };
  const std::size_t equals = text.find('=');
  if (equals == std::string::npos || equals == 0) throw bad("no argument name");
  ShapeSpec spec;
  spec.name = text.substr(0, equals);
  std::string dims = text.substr(equals + 1);
  if (const std::size_t colon = dims.find(':'); colon != std::string::npos) {
    spec.dtype = dims.substr(colon + 1);
    dims.resize(colon);
    const Dtype* dtype = dtype_named(spec.dtype);
    if (!dtype || !dtype->shape_dtype)
      throw bad("unknown dtype '" + spec.dtype + "'; one of " + shape_dtype_names());
  }
  std::size_t start = 0;
  std::uint64_t elements = 1;
  bool overflow = false;
  while (!dims.empty() && start <= dims.size()) {
    const std::size_t x = std::min(dims.find('x', start), dims.size());
    const std::string d = dims.substr(start, x - start);
    if (d.empty() || d.find_first_not_of("0123456789") != std::string::npos)
      throw bad("dimension '" + d + "' is not a non-negative integer");
    // at most 18 digits: within int64 (a larger dimension cannot be within the byte bound)
    const std::string digits = d.substr(std::min(d.find_first_not_of('0'), d.size()));
    if (digits.size() > 18) {
      overflow = true;
      spec.shape.push_back(0);
    } else {
      const std::int64_t n = digits.empty() ? 0 : std::stoll(digits);
      spec.shape.push_back(n);
      if (n != 0 &&
          elements > std::numeric_limits<std::uint64_t>::max() / static_cast<std::uint64_t>(n))
        overflow = true;
      else
        elements *= static_cast<std::uint64_t>(n);
    }
    start = x + 1;
  }
  const std::uint64_t element_size =
      static_cast<std::uint64_t>(dtype_named(spec.dtype)->element_size);
  // LibTorch counts a tensor's bytes in int64, on the meta device too
  std::uint64_t bytes = 0;
  if (overflow || __builtin_mul_overflow(elements, element_size, &bytes) ||
      bytes > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()))
    throw bad(
        "the tensor would hold more than 9223372036854775807 bytes, more than LibTorch "
        "counts in a tensor");
  spec.text = text;
  spec.bytes = bytes;
  return spec;
}

void check_shaped_inputs(const ShapedInputs& shaped, bool allocated) {
  std::uint64_t bytes = 0;
  for (const ShapeSpec& spec : shaped.shapes) {
    // a tensor on the meta device has a shape and no storage: no bound but LibTorch's
    if (allocated && spec.bytes > kMaxShapeBytes)
      throw UsageError("--shape " + spec.text + ": the tensor would hold " +
                       std::to_string(spec.bytes) + " bytes, past the " +
                       std::to_string(kMaxShapeBytes) +
                       " bytes --shape makes at most (NAME=D1xD2x...[:DTYPE], e.g. "
                       "x=1x3x224x224 or ids=2x16:int64; --device meta makes none)");
    bytes += spec.bytes;  // each below 2^63: the sum of two fits
    if (allocated && bytes > kMaxShapeBytes)
      throw UsageError("--shape: the tensors would hold more than " +
                       std::to_string(kMaxShapeBytes) + " bytes together, the most --shape makes");
    bytes = std::min(bytes, kMaxShapeBytes + 1);
    // torch.randint(0, high, dtype=...) draws at most high - 1: it must fit the dtype
    static constexpr std::pair<std::string_view, std::int64_t> kHighest[] = {
        {"int8", 128}, {"uint8", 256}, {"int16", 32768}, {"int32", std::int64_t{1} << 31}};
    for (const auto& [name, highest] : kHighest)
      if (spec.dtype == name && shaped.int_high > highest)
        throw UsageError("--int-high " + std::to_string(shaped.int_high) + ": --shape " +
                         spec.name + " is " + spec.dtype + ", which holds values below " +
                         std::to_string(highest) + " only (torch.randint(0, " +
                         std::to_string(shaped.int_high) + ", dtype=torch." + spec.dtype +
                         ") refuses it too)");
  }
}

std::uint64_t parse_seed(const std::string& text) {
  const auto bad = [&] {
    return UsageError("--seed " + text +
                      ": not an integer in [-9223372036854775808, 18446744073709551615], the "
                      "seeds torch.manual_seed takes");
  };
  const bool negative = !text.empty() && text[0] == '-';
  const std::string digits = negative ? text.substr(1) : text;
  if (digits.empty() || digits.find_first_not_of("0123456789") != std::string::npos) throw bad();
  std::uint64_t value = 0;
  for (const char c : digits) {
    const auto digit = static_cast<std::uint64_t>(c - '0');
    if (value > (std::numeric_limits<std::uint64_t>::max() - digit) / 10) throw bad();
    value = value * 10 + digit;
  }
  if (!negative) return value;
  if (value > (std::uint64_t{1} << 63)) throw bad();
  return ~value + 1;  // two's complement: -1 -> 0xffffffffffffffff, as torch.manual_seed(-1)
}

}  // namespace vin::diagnostics
