#include "vin/diagnostics/diff/diff_gate.h"

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "vin/diagnostics/records/error.h"
#include "vin/diagnostics/text/printable.h"

namespace vin::diagnostics {
namespace {

// A magnitude of any size: base-1e9 limbs, least significant first, no leading zero limb.
using Magnitude = std::vector<std::uint32_t>;
constexpr std::uint32_t kBase = 1000000000;

Magnitude from_decimal(const std::string& digits) {
  Magnitude m;
  for (std::size_t end = digits.size(); end > 0;) {
    const std::size_t begin = end >= 9 ? end - 9 : 0;
    m.push_back(static_cast<std::uint32_t>(std::stoul(digits.substr(begin, end - begin))));
    end = begin;
  }
  while (!m.empty() && m.back() == 0) m.pop_back();
  return m;
}

int compare(const Magnitude& a, const Magnitude& b) {
  if (a.size() != b.size()) return a.size() < b.size() ? -1 : 1;
  for (std::size_t i = a.size(); i-- > 0;)
    if (a[i] != b[i]) return a[i] < b[i] ? -1 : 1;
  return 0;
}

Magnitude add(const Magnitude& a, const Magnitude& b) {
  Magnitude out;
  std::uint64_t carry = 0;
  for (std::size_t i = 0; i < std::max(a.size(), b.size()) || carry; ++i) {
    const std::uint64_t sum =
        carry + (i < a.size() ? a[i] : 0) + static_cast<std::uint64_t>(i < b.size() ? b[i] : 0);
    out.push_back(static_cast<std::uint32_t>(sum % kBase));
    carry = sum / kBase;
  }
  return out;
}

// a - b for a >= b
Magnitude subtract(const Magnitude& a, const Magnitude& b) {
  Magnitude out(a);
  std::int64_t borrow = 0;
  for (std::size_t i = 0; i < out.size(); ++i) {
    std::int64_t d = static_cast<std::int64_t>(out[i]) - borrow - (i < b.size() ? b[i] : 0);
    borrow = d < 0;
    out[i] = static_cast<std::uint32_t>(d < 0 ? d + kBase : d);
  }
  while (!out.empty() && out.back() == 0) out.pop_back();
  return out;
}

// a * factor, factor < 1e18
Magnitude multiply(const Magnitude& a, std::uint64_t factor) {
  const auto times = [](const Magnitude& m, std::uint32_t f) {
    Magnitude out;
    std::uint64_t carry = 0;
    for (std::size_t i = 0; i < m.size() || carry; ++i) {
      const std::uint64_t p = carry + (i < m.size() ? static_cast<std::uint64_t>(m[i]) * f : 0);
      out.push_back(static_cast<std::uint32_t>(p % kBase));
      carry = p / kBase;
    }
    while (!out.empty() && out.back() == 0) out.pop_back();
    return out;
  };
  Magnitude high = times(a, static_cast<std::uint32_t>(factor / kBase));
  if (!high.empty()) high.insert(high.begin(), 0);  // times 1e9
  return add(high, times(a, static_cast<std::uint32_t>(factor % kBase)));
}

// An integer of any size as a sign and a magnitude; nothing for another value.
struct Integer {
  bool negative = false;
  Magnitude magnitude;
};

std::optional<Integer> integer_of(const Json& v) {
  std::string digits;
  if (v.is_number_unsigned()) {
    digits = std::to_string(v.get<std::uint64_t>());
  } else if (v.is_number_integer()) {
    const std::int64_t n = v.get<std::int64_t>();
    digits = n < 0 ? "-" + std::to_string(-static_cast<std::uint64_t>(n)) : std::to_string(n);
  } else if (is_big_integer(v)) {
    digits = big_integer_digits(v);
  } else {
    return std::nullopt;
  }
  Integer out;
  out.negative = !digits.empty() && digits[0] == '-';
  out.magnitude = from_decimal(out.negative ? digits.substr(1) : digits);
  if (out.magnitude.empty()) out.negative = false;
  return out;
}

std::uint64_t power_of_ten(int n) {
  std::uint64_t p = 1;
  while (n-- > 0) p *= 10;
  return p;
}

// Whether a change of `size` (a magnitude) from `old_size` lies within `limit`'s bound.
bool within_bound(const Magnitude& size, const Magnitude& old_size, const ToleranceLimit& limit) {
  if (limit.percent) {
    if (old_size.empty()) return size.empty();  // a percent never covers a change from 0
    // size / old <= digits / 10^scale / 100  <=>  size * 100 * 10^scale <= digits * old
    return compare(multiply(size, 100 * power_of_ten(limit.scale)),
                   multiply(old_size, limit.digits)) <= 0;
  }
  return compare(multiply(size, power_of_ten(limit.scale)),
                 from_decimal(std::to_string(limit.digits))) <= 0;
}

bool integers_within(const Integer& a, const Integer& b,
                     const std::vector<ToleranceLimit>& limits) {
  // d = b - a, as a sign and a magnitude
  bool grew = false;
  Magnitude size;
  if (a.negative == b.negative) {
    const int c = compare(b.magnitude, a.magnitude);
    size = c >= 0 ? subtract(b.magnitude, a.magnitude) : subtract(a.magnitude, b.magnitude);
    grew = (c > 0) != a.negative;
  } else {
    size = add(a.magnitude, b.magnitude);
    grew = a.negative;  // from below zero to above it
  }
  for (const ToleranceLimit& limit : limits) {
    using D = ToleranceLimit::Direction;
    if ((limit.direction == D::growth && !grew) || (limit.direction == D::decrease && grew))
      continue;  // the direction it does not bound
    if (!within_bound(size, a.magnitude, limit)) return false;
  }
  return true;
}

bool doubles_within(double a, double b, const std::vector<ToleranceLimit>& limits) {
  if (!std::isfinite(a) || !std::isfinite(b)) return false;
  const double d = b - a;
  for (const ToleranceLimit& limit : limits) {
    using D = ToleranceLimit::Direction;
    if ((limit.direction == D::growth && d <= 0) || (limit.direction == D::decrease && d >= 0))
      continue;
    const double value =
        static_cast<double>(limit.digits) / static_cast<double>(power_of_ten(limit.scale));
    if (limit.percent ? (a == 0 || std::fabs(d) > value / 100 * std::fabs(a))
                      : std::fabs(d) > value)
      return false;
  }
  return true;
}

bool values_within(const Json& a, const Json& b, const std::vector<ToleranceLimit>& limits) {
  if (a.is_object() && b.is_object()) {  // a mapping of numbers (latency_ms): each number
    if (a.size() != b.size()) return false;
    for (const auto& [key, value] : a.items())
      if (!b.contains(key) || !values_within(value, b.at(key), limits)) return false;
    return true;
  }
  const auto x = integer_of(a), y = integer_of(b);
  if (x && y) return integers_within(*x, *y, limits);
  const auto as_double = [](const Json& v) -> std::optional<double> {
    if (v.is_number()) return v.get<double>();
    if (is_big_integer(v)) return std::stod(big_integer_digits(v));
    return std::nullopt;
  };
  const auto p = as_double(a), q = as_double(b);
  return p && q && doubles_within(*p, *q, limits);
}

}  // namespace

ToleranceLimit ToleranceLimit::parse(const std::string& limit, const std::string& flag) {
  ToleranceLimit out;
  out.text = limit;
  std::string rest = limit;
  if (!rest.empty() && (rest[0] == '+' || rest[0] == '-')) {
    out.direction = rest[0] == '+' ? Direction::growth : Direction::decrease;
    rest = rest.substr(1);
  }
  if (!rest.empty() && rest.back() == '%') {
    out.percent = true;
    rest.pop_back();
  }
  const std::size_t point = rest.find('.');
  const std::string whole = rest.substr(0, point);
  const std::string fraction = point == std::string::npos ? "" : rest.substr(point + 1);
  const auto digits_only = [](const std::string& s) {
    return std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
  };
  if (whole.empty() || !digits_only(whole) || (point != std::string::npos && fraction.empty()) ||
      !digits_only(fraction) || whole.size() + fraction.size() > 17)
    throw UsageError(flag + ": the limit '" + printable(limit, 80) +
                     "' is not [+|-]DIGITS[.DIGITS][%] (at most 17 digits): 5%, +5%, -10%, "
                     "600, +0.5");
  out.digits = std::stoull(whole + fraction);
  out.scale = static_cast<int>(fraction.size());
  return out;
}

DiffGate::DiffGate(std::vector<std::string> ignore, std::vector<std::string> only,
                   const std::vector<std::string>& tolerances)
    : ignore_(ignore.begin(), ignore.end()), only_(only.begin(), only.end()) {
  for (const std::string& given : tolerances) {
    const std::size_t eq = given.find('=');
    const std::string flag = "--tolerance " + printable(given, 120);
    if (eq == std::string::npos || eq == 0)
      throw UsageError(flag + ": expected FIELD=LIMIT (flops=5%, calls=+2)");
    const std::string field = given.substr(0, eq);
    ToleranceLimit limit = ToleranceLimit::parse(given.substr(eq + 1), flag);
    auto& limits = limits_[field];
    for (const ToleranceLimit& other : limits)
      if (other.direction == limit.direction)
        throw UsageError(flag + ": " + printable(field, 80) + " has a " +
                         (limit.direction == ToleranceLimit::Direction::both
                              ? std::string("symmetric")
                          : limit.direction == ToleranceLimit::Direction::growth ? "'+'"
                                                                                 : "'-'") +
                         " limit already (" + other.text + ")");
    limits.push_back(std::move(limit));
  }
  for (const std::string& field : ignore_) {
    if (only_.count(field))
      throw UsageError("--ignore " + printable(field, 80) + " and --only " + printable(field, 80) +
                       ": a field is compared or not, not both");
    if (limits_.count(field))
      throw UsageError("--ignore " + printable(field, 80) + " and --tolerance " +
                       printable(field, 80) + "=...: an ignored field has no tolerance");
  }
}

bool DiffGate::compares(const std::string& field, bool by_default) const {
  if (ignore_.count(field)) return false;
  if (limits_.count(field)) return true;
  return only_.empty() ? by_default : only_.count(field) > 0;
}

std::optional<bool> DiffGate::within(const std::string& field, const Json& old_value,
                                     const Json& new_value) const {
  const auto it = limits_.find(field);
  if (it == limits_.end()) return std::nullopt;
  return values_within(old_value, new_value, it->second);
}

std::vector<std::pair<std::string, std::string>> DiffGate::named_fields() const {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& f : ignore_) out.emplace_back("--ignore", f);
  for (const auto& f : only_) out.emplace_back("--only", f);
  for (const auto& [f, limits] : limits_) out.emplace_back("--tolerance", f);
  return out;
}

}  // namespace vin::diagnostics
