#include "vin/diagnostics/diff/diff_gate.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <set>

#include "vin/diagnostics/diff/record_set_parts.h"
#include "vin/diagnostics/json/bounded_json.h"
#include "vin/diagnostics/json/exact_integer.h"
#include "vin/diagnostics/records/error.h"
#include "vin/diagnostics/text/printable.h"
#include "vin/diagnostics/text/suggest.h"

namespace vin::diagnostics {
namespace {

std::uint64_t power_of_ten(int n) {
  std::uint64_t p = 1;
  while (n-- > 0) p *= 10;
  return p;
}

// Whether a change of `size` (>= 0) from `old_value` lies within `limit`'s bound.
bool within_bound(const ExactInteger& size, const ExactInteger& old_value,
                  const ToleranceLimit& limit) {
  if (limit.percent) {
    if (old_value.is_zero()) return size.is_zero();  // a percent never covers a change from 0
    // size / |old| <= digits / 10^scale / 100  <=>  size * 100 * 10^scale <= digits * |old|
    return ExactInteger::compare_magnitudes(size.times(100 * power_of_ten(limit.scale)),
                                            old_value.times(limit.digits)) <= 0;
  }
  return ExactInteger::compare_magnitudes(size.times(power_of_ten(limit.scale)),
                                          ExactInteger::of(limit.digits)) <= 0;
}

bool integers_within(const ExactInteger& a, const ExactInteger& b,
                     const std::vector<ToleranceLimit>& limits) {
  const ExactInteger change = b - a;
  const bool grew = !change.negative() && !change.is_zero();
  for (const ToleranceLimit& limit : limits) {
    using D = ToleranceLimit::Direction;
    if ((limit.direction == D::growth && !grew) || (limit.direction == D::decrease && grew))
      continue;  // the direction it does not bound
    if (!within_bound(change.magnitude(), a, limit)) return false;
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
  const auto x = ExactInteger::of(a), y = ExactInteger::of(b);
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

std::string field_in_message(const std::string& field) {
  return field.empty() ? "''" : printable(field, 80);
}

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
      !digits_only(fraction) || whole.size() + fraction.size() > 17 || fraction.size() > 15)
    throw UsageError(flag + ": the limit '" + printable(limit, 80) +
                     "' is not [+|-]DIGITS[.DIGITS][%] (at most 17 digits, 15 after the point): "
                     "5%, +5%, -10%, "
                     "600, +0.5");
  out.digits = std::stoull(whole + fraction);
  out.scale = static_cast<int>(fraction.size());
  return out;
}

DiffGate::DiffGate(std::vector<std::string> ignore, std::vector<std::string> only,
                   const std::vector<std::string>& tolerances,
                   std::vector<std::string> strip_prefixes)
    : ignore_(ignore.begin(), ignore.end()), only_(only.begin(), only.end()) {
  for (std::string& prefix : strip_prefixes) {
    if (prefix.empty() || prefix == ".")
      throw UsageError("--strip-prefix '" + printable(prefix, 80) +
                       "': a prefix of module paths is needed, such as module.");
    if (prefix.back() != '.') prefix += '.';
    strip_prefixes_.push_back(std::move(prefix));
  }
  for (const std::string& given : tolerances) {
    const std::size_t eq = given.find('=');
    const std::string flag = "--tolerance " + printable(given, 120);
    if (eq == std::string::npos || eq == 0)
      throw UsageError(flag + ": expected FIELD=LIMIT (flops=5%, calls=+2)");
    const std::string field = given.substr(0, eq);
    ToleranceLimit limit = ToleranceLimit::parse(given.substr(eq + 1), flag);
    auto& limits = limits_[field];
    // two limits for one field would each say how far it may move: ambiguous, but for one '+'
    // and one '-' limit, which bound one direction each (contract 9.4)
    using D = ToleranceLimit::Direction;
    for (const ToleranceLimit& other : limits)
      if (other.direction == limit.direction || other.direction == D::both ||
          limit.direction == D::both)
        throw UsageError(flag + ": " + field_in_message(field) + " has a " +
                         (other.direction == D::both     ? std::string("symmetric")
                          : other.direction == D::growth ? "'+'"
                                                         : "'-'") +
                         " limit already (" + other.text +
                         "); two limits for one field are ambiguous, but one '+' and one '-' "
                         "(" + field_in_message(field) + "=+5% with " + field_in_message(field) +
                         "=-10%)");
    limits.push_back(std::move(limit));
  }
  for (const std::string& field : ignore_) {
    const std::string name = field_in_message(field);
    if (only_.count(field))
      throw UsageError("--ignore " + name + " and --only " + name +
                       ": a field is compared or not, not both");
    if (limits_.count(field))
      throw UsageError("--ignore " + name + " and --tolerance " + name +
                       "=...: an ignored field has no tolerance");
  }
}

std::string DiffGate::stripped(std::string name) const {
  for (const std::string& prefix : strip_prefixes_) {
    if (name.compare(0, prefix.size(), prefix) == 0)
      name.erase(0, prefix.size());
    else if (name.size() + 1 == prefix.size() && prefix.compare(0, name.size(), name) == 0)
      name.clear();
  }
  return name;
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

namespace {

using namespace diff_detail;

// The lists a set holds, each with the name diff's field tables give its records.
template <class Visit>
void for_each_list(const RecordSet& set, Visit visit) {
  visit(set.items);
  visit(set.operators);
  for (const auto* list : {&set.tensors, &set.methods, &set.operator_counts})
    if (*list) visit(**list);
}

// Every field name the records of `set` have, as --ignore may name them; `matched_by` gets
// those that identify a record (a module's path, a tensor's name), which are never compared.
void collect_field_names(const RecordSet& set, std::set<std::string>& out,
                         std::set<std::string>& matched_by) {
  for (const auto& [key, value] : set.header.items()) out.insert(key);
  const auto add = [&](const RecordList& list, std::initializer_list<const char*> identity) {
    for (const FieldName name : list.names()) {
      const std::string& text = field_name_text(name);
      (one_of(text, identity) ? matched_by : out).insert(text);
    }
  };
  add(set.items, {"path", "module_path"});
  add(set.operators, {"operator"});
  if (set.tensors) {
    for (const char* key : kTensorKeys)
      if (std::string(key) != "name") out.insert(key);
    add(*set.tensors, {"name", "module_path"});  // a weights file's key, data_crc32, ...
  }
  if (set.methods) out.insert({"arguments", "returns", "outputs", "dimensions"});
  if (set.graph_signature)
    for (const auto& [key, value] : set.graph_signature->items()) out.insert(key);
  if (set.operator_counts) out.insert("calls");
}

bool numeric(const Json& v) {
  if (v.is_null() || v.is_number() || is_big_integer(v)) return !v.is_boolean();
  if (!v.is_object()) return false;
  return std::all_of(v.begin(), v.end(), [](const Json& x) {
    return (x.is_number() && !x.is_boolean()) || is_big_integer(x) || x.is_null();
  });
}

// Each value `field` has in the set's records (the container, items, tensors, methods, ...).
template <class Visit>
void for_each_value(const RecordSet& set, const std::string& field, Visit visit) {
  const auto in = [&](const Json& item) {
    if (item.is_object() && item.contains(field)) visit(item.at(field));
  };
  in(set.header);
  if (set.graph_signature) in(*set.graph_signature);
  const FieldName name = field_name(field);
  for_each_list(set, [&](const RecordList& list) {
    for (std::size_t i = 0; i < list.size(); ++i)
      if (const FieldText* f = list[i].find(name)) {
        // a number or null as written, without parsing it (a million of them)
        const char first = f->size ? f->data[0] : ' ';
        if (first == '-' || (first >= '0' && first <= '9') || f->text() == "null") continue;
        visit(parse_text(f->text()));
      }
  });
}

}  // namespace

// Every field the options name is one the records have (compared by default or not), and each
// --tolerance field holds numbers; else a UsageError naming the option, the field and the
// closest names.
void check_named_fields(const RecordSet& old_set, const RecordSet& new_set, const DiffGate& gate) {
  std::set<std::string> known, matched_by;
  collect_field_names(old_set, known, matched_by);
  collect_field_names(new_set, known, matched_by);
  for (const auto& [flag, field] : gate.named_fields()) {
    if (!known.count(field) && matched_by.count(field))
      throw UsageError(flag + " " + field_in_message(field) + ": records are matched by " +
                       field_in_message(field) + ", which is never compared");
    if (!known.count(field)) {
      const auto near =
          closest_matches(field, std::vector<std::string>(known.begin(), known.end()));
      std::string hint;
      for (const auto& n : near) hint += (hint.empty() ? "" : ", ") + n;
      throw UsageError(flag + " " + field_in_message(field) +
                       ": no compared record has this field" +
                       (hint.empty() ? "" : "; the closest: " + hint));
    }
    if (flag != "--tolerance") continue;
    const std::string name = field_in_message(field);  // a lambda captures no structured binding
    for (const RecordSet* set : {&old_set, &new_set})
      for_each_value(*set, field, [&name](const Json& v) {
        if (!numeric(v))
          throw UsageError("--tolerance " + name + "=...: " + name + " is not a number (" +
                           printable(dump_line(v), 80) +
                           "); a limit applies to numbers and to mappings of numbers");
      });
  }
}

}  // namespace vin::diagnostics
