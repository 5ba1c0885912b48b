// Records of a configuration walk (ConfigFieldSpec and ModelStructureSpec; docs/records.md). Plain
// immutable values; nothing here depends on LibTorch or on YAML.
#pragma once

#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

namespace vin::diagnostics {

/// The value of a structured field: `{"type_marker": "qualified.Type"}` in JSON.
struct TypeMarker {
  std::string type;
  friend bool operator==(const TypeMarker& a, const TypeMarker& b) { return a.type == b.type; }
  friend bool operator!=(const TypeMarker& a, const TypeMarker& b) { return !(a == b); }
};

/// A field's value: null, a bool, an int, a float, a string (also for integers beyond 64 bits,
/// which keep their decimal digits), or a type marker for models, sequences, mappings, classes.
using ConfigValue =
    std::variant<std::nullptr_t, bool, std::int64_t, double, std::string, TypeMarker>;

/// One field observed in a construction-free configuration walk.
class ConfigFieldSpec {
 public:
  ConfigFieldSpec(std::vector<std::string> path, std::optional<std::string> declared_type,
                  std::string configured_type, ConfigValue value)
      : path_(std::move(path)),
        declared_type_(std::move(declared_type)),
        configured_type_(std::move(configured_type)),
        value_(std::move(value)) {}

  /// Field names from the root; sequence positions are decimal strings.
  const std::vector<std::string>& path() const { return path_; }
  /// The annotation the field's model declares, verbatim; empty when none is declared.
  const std::optional<std::string>& declared_type() const { return declared_type_; }
  /// Fully qualified runtime type of the configured value, e.g. "builtins.int".
  const std::string& configured_type() const { return configured_type_; }
  /// Scalar or enum value; other values are a type marker.
  const ConfigValue& value() const { return value_; }

  // NaN values compare equal, so that a record equals its own copy.
  friend bool operator==(const ConfigFieldSpec& a, const ConfigFieldSpec& b) {
    if (a.value_.index() != b.value_.index()) return false;
    if (const double* x = std::get_if<double>(&a.value_)) {
      const double y = std::get<double>(b.value_);
      if (!((std::isnan(*x) && std::isnan(y)) || *x == y)) return false;
    } else if (a.value_ != b.value_) {
      return false;
    }
    return a.path_ == b.path_ && a.declared_type_ == b.declared_type_ &&
           a.configured_type_ == b.configured_type_;
  }
  friend bool operator!=(const ConfigFieldSpec& a, const ConfigFieldSpec& b) { return !(a == b); }

 private:
  std::vector<std::string> path_;
  std::optional<std::string> declared_type_;
  std::string configured_type_;
  ConfigValue value_;
};

/// Construction-free description of one model configuration tree.
class ModelStructureSpec {
 public:
  ModelStructureSpec(std::optional<std::string> config_type, std::optional<std::string> target_type,
                     std::vector<ConfigFieldSpec> fields)
      : config_type_(std::move(config_type)),
        target_type_(std::move(target_type)),
        fields_(std::move(fields)) {}

  /// Fully qualified type of the root config model (empty for an untagged root).
  const std::optional<std::string>& config_type() const { return config_type_; }
  /// Fully qualified root target_type, empty when absent or null.
  const std::optional<std::string>& target_type() const { return target_type_; }
  /// Depth-first field records in declaration and sequence-index order.
  const std::vector<ConfigFieldSpec>& fields() const { return fields_; }

  friend bool operator==(const ModelStructureSpec& a, const ModelStructureSpec& b) {
    return a.config_type_ == b.config_type_ && a.target_type_ == b.target_type_ &&
           a.fields_ == b.fields_;
  }
  friend bool operator!=(const ModelStructureSpec& a, const ModelStructureSpec& b) {
    return !(a == b);
  }

 private:
  std::optional<std::string> config_type_;
  std::optional<std::string> target_type_;
  std::vector<ConfigFieldSpec> fields_;
};

}  // namespace vin::diagnostics
