// What `diff` compares and what it lets through (contract 9.4): `--ignore` and `--only` choose the
// fields, `--tolerance FIELD=LIMIT` marks a numeric change within a limit, which is still
// reported but does not make the exit status 1. The limits are checked exactly for integers of
// any size (the digits records keep past 64 bits), and in doubles for floats.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "vin/diagnostics/json/diff_records.h"
#include "vin/diagnostics/records/record_value.h"

namespace vin::diagnostics {

/// A field name as --ignore, --only and --tolerance's errors show it: printable, `''` where
/// empty (an empty shell variable), so that every such error names the field it is about.
std::string field_in_message(const std::string& field);

/// One LIMIT of `--tolerance`: `[+|-]DIGITS[.DIGITS][%]`.
struct ToleranceLimit {
  enum class Direction { both, growth, decrease };
  Direction direction = Direction::both;
  std::uint64_t digits = 0;  ///< the number without its point: 12.5 -> 125
  int scale = 0;             ///< digits after the point: 12.5 -> 1
  bool percent = false;      ///< of the old value; else absolute
  std::string text;          ///< as given, for messages

  /// Parses LIMIT; throws UsageError naming `flag` for any other form.
  static ToleranceLimit parse(const std::string& limit, const std::string& flag);
};

/// The fields diff compares and the limits of each.
class DiffGate {
 public:
  DiffGate() = default;
  /// From the options as given (`tolerances` as FIELD=LIMIT). Throws UsageError, naming the
  /// option and the field, for a LIMIT of another form, two limits for a field but one '+' and
  /// one '-' (two of one kind, or a symmetric one beside any other), a field in --ignore and in
  /// --only or --tolerance.
  DiffGate(std::vector<std::string> ignore, std::vector<std::string> only,
           const std::vector<std::string>& tolerances,
           std::vector<std::string> strip_prefixes = {});

  /// Whether `field` is compared: not ignored, and named by --tolerance, or by --only (when it
  /// is given), or compared by default (`by_default`: the record's field table says so).
  bool compares(const std::string& field, bool by_default) const;
  /// Whether a change of `field` from `old_value` to `new_value` lies within its limits; none
  /// for a field without a tolerance. A value that is not a number (or a mapping of numbers
  /// with the same keys) is never within.
  std::optional<bool> within(const std::string& field, const Json& old_value,
                             const Json& new_value) const;

  /// Every field the options name, with the option: {"--ignore", field}, ...
  std::vector<std::pair<std::string, std::string>> named_fields() const;
  bool has_tolerance(const std::string& field) const { return limits_.count(field) > 0; }
  /// --ignore's fields (`attributes` leaves out every attribute)
  const std::set<std::string>& ignored() const { return ignore_; }

  /// Whether --strip-prefix names any prefix.
  bool strips() const { return !strip_prefixes_.empty(); }
  /// A dotted module path or tensor name with --strip-prefix's prefixes taken off, each in the
  /// order given where the name starts with it (`module.fc.weight` -> `fc.weight`); a name that
  /// is a prefix without its dot becomes "" (the root).
  std::string stripped(std::string name) const;

 private:
  std::set<std::string> ignore_;
  std::set<std::string> only_;
  std::map<std::string, std::vector<ToleranceLimit>> limits_;
  std::vector<std::string> strip_prefixes_;  // each ending with '.'
};

/// Every field the options name is one the records of `old_set` or `new_set` have (compared by
/// default or not), and each --tolerance field holds numbers; else a UsageError naming the
/// option, the field and the closest names.
void check_named_fields(const RecordSet& old_set, const RecordSet& new_set, const DiffGate& gate);

}  // namespace vin::diagnostics
