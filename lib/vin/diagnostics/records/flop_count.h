// A count of FLOPs, exact past 64 bits. One operator call's count is a product of element counts
// that LibTorch holds in int64 (an (m, k) @ (k, n) product: 2·m·k·n, up to 2^127), and on the
// meta device a forward of any size runs in no memory, so a count past INT64_MAX is a real one:
// Python's FlopCounterMode gives it exactly, and so does profile. Past 2^127 a count has
// overflowed, stays there and is reported so (records: null, ProfileSummary::flops_overflowed).
#pragma once

#include <cstdint>
#include <limits>
#include <string>

namespace vin::diagnostics {

__extension__ typedef unsigned __int128 FlopCount;  // GCC and Clang on every 64-bit target

inline constexpr FlopCount kFlopsOverflowed = FlopCount(1) << 127;

inline constexpr bool flops_overflowed(FlopCount count) { return count >= kFlopsOverflowed; }

/// The multiply-adds of `flops` (every FLOP rule counts 2 a multiply-add): half, or the
/// overflowed count as it is.
inline constexpr FlopCount macs_of(FlopCount flops) {
  return flops_overflowed(flops) ? flops : flops / 2;
}

/// a + b, stopping at kFlopsOverflowed (both below 2^127 + 1: their sum fits 128 bits)
inline constexpr FlopCount add_flops(FlopCount a, FlopCount b) {
  if (flops_overflowed(a) || flops_overflowed(b)) return kFlopsOverflowed;
  const FlopCount sum = a + b;
  return sum >= kFlopsOverflowed ? kFlopsOverflowed : sum;
}

/// a · b, stopping at kFlopsOverflowed
inline constexpr FlopCount multiply_flops(FlopCount a, FlopCount b) {
  if (a == 0 || b == 0) return 0;
  if (flops_overflowed(a) || flops_overflowed(b) || a > (kFlopsOverflowed - 1) / b)
    return kFlopsOverflowed;
  return a * b;
}

/// Whether the count fits an int64 (and is then exactly `static_cast<std::int64_t>(count)`).
inline constexpr bool fits_int64(FlopCount count) {
  return count <= static_cast<FlopCount>(std::numeric_limits<std::int64_t>::max());
}

/// The decimal digits of the count ("18446744073709551617").
inline std::string flop_digits(FlopCount count) {
  if (count == 0) return "0";
  std::string digits;
  for (; count > 0; count /= 10) digits.insert(digits.begin(), char('0' + int(count % 10)));
  return digits;
}

}  // namespace vin::diagnostics
