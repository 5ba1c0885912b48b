// Records that describe a constructed model's registered state (ModuleMetadata and
// ModelMetadata). They are plain immutable values: built once, read through accessors named
// after the Python module's attributes (docs/records.md), compared with ==. Nothing here depends on
// LibTorch.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace vin::diagnostics {

/// Static metadata for one registered module in a constructed model.
class ModuleMetadata {
 public:
  ModuleMetadata(std::string path, std::string module_type, std::int64_t direct_parameters,
                 std::int64_t trainable_parameters, std::int64_t direct_buffers, bool training)
      : path_(std::move(path)),
        module_type_(std::move(module_type)),
        direct_parameters_(direct_parameters),
        trainable_parameters_(trainable_parameters),
        direct_buffers_(direct_buffers),
        training_(training) {}

  /// Registration path from the model root, "<root>" at the root.
  const std::string& path() const { return path_; }
  /// Python-qualified type of the module (TorchScript mangling removed).
  const std::string& module_type() const { return module_type_; }
  /// Elements in parameters registered directly on this module (None slots count zero).
  std::int64_t direct_parameters() const { return direct_parameters_; }
  /// Elements in gradient-enabled parameters registered directly on this module.
  std::int64_t trainable_parameters() const { return trainable_parameters_; }
  /// Elements in tensors registered directly on this module as buffers.
  std::int64_t direct_buffers() const { return direct_buffers_; }
  /// The module's training flag at inspection time.
  bool training() const { return training_; }

  friend bool operator==(const ModuleMetadata& a, const ModuleMetadata& b) {
    return a.path_ == b.path_ && a.module_type_ == b.module_type_ &&
           a.direct_parameters_ == b.direct_parameters_ &&
           a.trainable_parameters_ == b.trainable_parameters_ &&
           a.direct_buffers_ == b.direct_buffers_ && a.training_ == b.training_;
  }
  friend bool operator!=(const ModuleMetadata& a, const ModuleMetadata& b) { return !(a == b); }

 private:
  std::string path_;
  std::string module_type_;
  std::int64_t direct_parameters_;
  std::int64_t trainable_parameters_;
  std::int64_t direct_buffers_;
  bool training_;
};

/// Registered-module metadata for an already constructed model.
class ModelMetadata {
 public:
  ModelMetadata(std::string model_type, std::int64_t total_parameters,
                std::int64_t trainable_parameters, std::vector<ModuleMetadata> modules)
      : model_type_(std::move(model_type)),
        total_parameters_(total_parameters),
        trainable_parameters_(trainable_parameters),
        modules_(std::move(modules)) {}

  /// Python-qualified type of the root module.
  const std::string& model_type() const { return model_type_; }
  /// Elements in all parameters reachable from the root, each tensor counted once.
  std::int64_t total_parameters() const { return total_parameters_; }
  /// Elements in all gradient-enabled reachable parameters, each tensor counted once.
  std::int64_t trainable_parameters() const { return trainable_parameters_; }
  /// Unique registered modules in named_modules order, the root first.
  const std::vector<ModuleMetadata>& modules() const { return modules_; }

  friend bool operator==(const ModelMetadata& a, const ModelMetadata& b) {
    return a.model_type_ == b.model_type_ && a.total_parameters_ == b.total_parameters_ &&
           a.trainable_parameters_ == b.trainable_parameters_ && a.modules_ == b.modules_;
  }
  friend bool operator!=(const ModelMetadata& a, const ModelMetadata& b) { return !(a == b); }

 private:
  std::string model_type_;
  std::int64_t total_parameters_;
  std::int64_t trainable_parameters_;
  std::vector<ModuleMetadata> modules_;
};

/// Why a model's element counts cannot be reported (both readers say the same).
inline constexpr const char* kCountOverflowMessage =
    "the model's element counts overflow 64 bits, which no real model's can";

/// The path of the model root in the records.
inline constexpr const char* kRootPath = "<root>";

}  // namespace vin::diagnostics
