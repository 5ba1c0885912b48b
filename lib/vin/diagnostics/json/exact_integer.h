// Integers of any size, as records hold them (int64, uint64, or the digits of a big integer
// past 64 bits: record_value.h), for what diff computes of them exactly: the change between two
// values (--format markdown) and whether it lies within a --tolerance (diff_gate).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "vin/diagnostics/records/record_value.h"

namespace vin::diagnostics {

class ExactInteger {
 public:
  ExactInteger() = default;
  /// The integer a JSON value holds; nothing for a float, a string or anything else.
  static std::optional<ExactInteger> of(const Json& value);
  static ExactInteger of(std::uint64_t value);

  bool negative() const { return negative_; }
  bool is_zero() const { return limbs_.empty(); }
  ExactInteger magnitude() const;
  ExactInteger operator-(const ExactInteger& other) const;
  /// times `factor` (< 10^18)
  ExactInteger times(std::uint64_t factor) const;
  /// -1, 0 or 1 as |a| is below, at or above |b|
  static int compare_magnitudes(const ExactInteger& a, const ExactInteger& b);
  /// "-1234567890123456789012"
  std::string decimal() const;

 private:
  bool negative_ = false;
  std::vector<std::uint32_t> limbs_;  ///< base 10^9, least significant first, no leading zero
};

}  // namespace vin::diagnostics
