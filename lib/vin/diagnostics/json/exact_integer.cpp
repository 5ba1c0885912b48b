#include "vin/diagnostics/json/exact_integer.h"

#include <algorithm>

namespace vin::diagnostics {
namespace {

using Limbs = std::vector<std::uint32_t>;
constexpr std::uint32_t kBase = 1000000000;

void trim(Limbs& m) {
  while (!m.empty() && m.back() == 0) m.pop_back();
}

Limbs from_decimal(const std::string& digits) {
  Limbs m;
  for (std::size_t end = digits.size(); end > 0;) {
    const std::size_t begin = end >= 9 ? end - 9 : 0;
    m.push_back(static_cast<std::uint32_t>(std::stoul(digits.substr(begin, end - begin))));
    end = begin;
  }
  trim(m);
  return m;
}

int compare(const Limbs& a, const Limbs& b) {
  if (a.size() != b.size()) return a.size() < b.size() ? -1 : 1;
  for (std::size_t i = a.size(); i-- > 0;)
    if (a[i] != b[i]) return a[i] < b[i] ? -1 : 1;
  return 0;
}

Limbs add(const Limbs& a, const Limbs& b) {
  Limbs out;
  std::uint64_t carry = 0;
  for (std::size_t i = 0; i < std::max(a.size(), b.size()) || carry; ++i) {
    const std::uint64_t sum =
        carry + (i < a.size() ? a[i] : 0) + static_cast<std::uint64_t>(i < b.size() ? b[i] : 0);
    out.push_back(static_cast<std::uint32_t>(sum % kBase));
    carry = sum / kBase;
  }
  trim(out);
  return out;
}

// a - b for |a| >= |b|
Limbs subtract(const Limbs& a, const Limbs& b) {
  Limbs out(a);
  std::int64_t borrow = 0;
  for (std::size_t i = 0; i < out.size(); ++i) {
    const std::int64_t d = static_cast<std::int64_t>(out[i]) - borrow - (i < b.size() ? b[i] : 0);
    borrow = d < 0;
    out[i] = static_cast<std::uint32_t>(d < 0 ? d + kBase : d);
  }
  trim(out);
  return out;
}

Limbs times_small(const Limbs& m, std::uint32_t f) {
  Limbs out;
  std::uint64_t carry = 0;
  for (std::size_t i = 0; i < m.size() || carry; ++i) {
    const std::uint64_t p = carry + (i < m.size() ? static_cast<std::uint64_t>(m[i]) * f : 0);
    out.push_back(static_cast<std::uint32_t>(p % kBase));
    carry = p / kBase;
  }
  trim(out);
  return out;
}

}  // namespace

std::optional<ExactInteger> ExactInteger::of(const Json& value) {
  std::string digits;
  if (value.is_number_unsigned()) {
    digits = std::to_string(value.get<std::uint64_t>());
  } else if (value.is_number_integer()) {
    const std::int64_t n = value.get<std::int64_t>();
    digits = n < 0 ? "-" + std::to_string(0 - static_cast<std::uint64_t>(n)) : std::to_string(n);
  } else if (is_big_integer(value)) {
    digits = big_integer_digits(value);
  } else {
    return std::nullopt;
  }
  ExactInteger out;
  const bool negative = !digits.empty() && digits[0] == '-';
  out.limbs_ = from_decimal(negative ? digits.substr(1) : digits);
  out.negative_ = negative && !out.limbs_.empty();
  return out;
}

ExactInteger ExactInteger::of(std::uint64_t value) { return *of(Json(value)); }

ExactInteger ExactInteger::magnitude() const {
  ExactInteger out = *this;
  out.negative_ = false;
  return out;
}

ExactInteger ExactInteger::operator-(const ExactInteger& other) const {
  ExactInteger out;
  if (negative_ != other.negative_) {  // a - (-b) = a + b; -a - b = -(a + b)
    out.limbs_ = add(limbs_, other.limbs_);
    out.negative_ = negative_;
  } else if (compare(limbs_, other.limbs_) >= 0) {
    out.limbs_ = subtract(limbs_, other.limbs_);
    out.negative_ = negative_;
  } else {
    out.limbs_ = subtract(other.limbs_, limbs_);
    out.negative_ = !negative_;
  }
  if (out.limbs_.empty()) out.negative_ = false;
  return out;
}

ExactInteger ExactInteger::times(std::uint64_t factor) const {
  Limbs high = times_small(limbs_, static_cast<std::uint32_t>(factor / kBase));
  if (!high.empty()) high.insert(high.begin(), 0);  // times 10^9
  ExactInteger out;
  out.limbs_ = add(high, times_small(limbs_, static_cast<std::uint32_t>(factor % kBase)));
  out.negative_ = negative_ && !out.limbs_.empty();
  return out;
}

int ExactInteger::compare_magnitudes(const ExactInteger& a, const ExactInteger& b) {
  return compare(a.limbs_, b.limbs_);
}

std::string ExactInteger::decimal() const {
  if (limbs_.empty()) return "0";
  std::string out = std::to_string(limbs_.back());
  for (std::size_t i = limbs_.size() - 1; i-- > 0;) {
    const std::string part = std::to_string(limbs_[i]);
    out += std::string(9 - part.size(), '0') + part;
  }
  return negative_ ? "-" + out : out;
}

}  // namespace vin::diagnostics
