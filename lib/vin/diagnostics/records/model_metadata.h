// Records that describe a constructed model's registered state (ModuleMetadata and
// ModelMetadata). They are plain immutable values: built once, read through accessors named
// after the Python module's attributes (docs/records.md), compared with ==. Nothing here depends on
// LibTorch.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "vin/diagnostics/records/export_records.h"
#include "vin/diagnostics/records/record_value.h"
#include "vin/diagnostics/records/file_records.h"

namespace vin::diagnostics {

/// What inspect-model describes beyond the counts (--tensors, --attributes, --signature).
struct InspectDetails {
  bool tensors = false;     ///< TensorMetadata per registered tensor, and the model's bytes
  bool attributes = false;  ///< each module's non-tensor attributes and constants
  bool signature = false;   ///< MethodSignature of the root's forward and public methods
  /// OperatorCount per module and operator a torch.export program calls (--operators)
  bool operators = false;
  /// which program of a torch.export archive holding several (--model; "" for the default)
  std::string model;
  bool any() const { return tensors || attributes || signature; }
  /// Every detail (--all).
  static InspectDetails everything() {
    InspectDetails d;
    d.tensors = d.attributes = d.signature = true;
    return d;
  }
};

/// One parameter or buffer registered directly on a module (docs/records.md).
struct TensorMetadata {
  std::string name;  ///< its name on the module (`weight`)
  std::string kind;  ///< "parameter" or "buffer"
  std::vector<std::int64_t> shape;
  std::string dtype;  ///< Python's str(dtype): "torch.float32"
  /// Python's str(device): "cpu", "cuda:0"; none where the file does not say (safetensors)
  std::optional<std::string> device;
  std::optional<bool> requires_grad;  ///< none where the file does not say (safetensors)
  std::int64_t numel = 0;
  std::int64_t nbytes = 0;  ///< numel times the element size
  /// the CRC-32 the archive's zip directory records for the storage, 8 lowercase hex digits;
  /// nothing where no archive record holds the storage
  std::optional<std::string> storage_crc32;
  /// a weights file's key for it, dotted from the file's root (`model.fc1.weight` in a
  /// checkpoint); none for an archive's tensors
  std::optional<std::string> key;
  /// the shard that holds it (a sharded set's); none for one file
  std::optional<std::string> file;
  /// the keys of the other tensors of its storage, offset, shape and strides (counted once)
  std::vector<std::string> shared_with;
  /// the CRC-32 of its elements, row-major and little-endian (equal weights, equal values, in
  /// every format), 8 lowercase hex digits
  std::optional<std::string> data_crc32;

  friend bool operator==(const TensorMetadata& a, const TensorMetadata& b) {
    return a.name == b.name && a.kind == b.kind && a.shape == b.shape && a.dtype == b.dtype &&
           a.device == b.device && a.requires_grad == b.requires_grad && a.numel == b.numel &&
           a.nbytes == b.nbytes && a.storage_crc32 == b.storage_crc32 && a.key == b.key &&
           a.file == b.file && a.shared_with == b.shared_with && a.data_crc32 == b.data_crc32;
  }
};

/// What an exported program records of a tensor it takes or returns: its dtype and shape, a
/// symbolic size by its expression ("s0", "2*s0").
struct TensorSpec {
  std::string dtype;  ///< "torch.float32"
  Json shape;         ///< an array of integers and strings

  friend bool operator==(const TensorSpec& a, const TensorSpec& b) {
    return a.dtype == b.dtype && same_json(a.shape, b.shape);
  }
};

/// One argument of a method (self excluded).
struct ArgumentSignature {
  std::string name;
  std::string type;  ///< as Python's str(argument.type) prints it: "Optional[Tensor]"
  bool has_default = false;
  Json default_value;  ///< null without a default
  /// a torch.export program's user input: the tensor it is (none in TorchScript)
  std::optional<TensorSpec> tensor;

  friend bool operator==(const ArgumentSignature& a, const ArgumentSignature& b) {
    return a.name == b.name && a.type == b.type && a.has_default == b.has_default &&
           same_json(a.default_value, b.default_value) && a.tensor == b.tensor;
  }
};

/// One user output of a torch.export program.
struct ReturnSignature {
  std::optional<std::string> name;  ///< the graph's name for it; none for a constant
  std::string type;                 ///< "Tensor", "SymInt", "int", ...
  std::optional<TensorSpec> tensor;

  friend bool operator==(const ReturnSignature& a, const ReturnSignature& b) {
    return a.name == b.name && a.type == b.type && a.tensor == b.tensor;
  }
};

/// A symbol of a torch.export program's range_constraints and its range (none: unbounded).
struct SymbolicDimension {
  std::string name;  ///< as the program writes it: "s0", "2*s0"
  std::optional<std::int64_t> min;
  std::optional<std::int64_t> max;

  friend bool operator==(const SymbolicDimension& a, const SymbolicDimension& b) {
    return a.name == b.name && a.min == b.min && a.max == b.max;
  }
};

/// The signature of a method compiled into the root's class, or of a torch.export program's
/// forward (docs/records.md).
struct MethodSignature {
  std::string name;
  std::vector<ArgumentSignature> arguments;
  std::string returns;  ///< the return type, same spelling as argument types
  /// a torch.export program's user outputs and symbolic dimensions (none in TorchScript)
  std::optional<std::vector<ReturnSignature>> outputs;
  std::optional<std::vector<SymbolicDimension>> dimensions;

  friend bool operator==(const MethodSignature& a, const MethodSignature& b) {
    return a.name == b.name && a.arguments == b.arguments && a.returns == b.returns &&
           a.outputs == b.outputs && a.dimensions == b.dimensions;
  }
};

/// A module's details beyond the counts: present as asked for (InspectDetails).
struct ModuleDetails {
  std::optional<std::vector<TensorMetadata>> tensors;  ///< parameters, then buffers
  std::optional<Json> attributes;                      ///< an object, in definition order

  friend bool operator==(const ModuleDetails& a, const ModuleDetails& b) {
    return a.tensors == b.tensors && (a.attributes ? a.attributes->dump() : std::string()) ==
                                         (b.attributes ? b.attributes->dump() : std::string());
  }
};

/// The model's details beyond the counts: present as asked for (InspectDetails).
struct ModelDetails {
  std::optional<std::int64_t> parameter_bytes;          ///< each parameter tensor counted once
  std::optional<std::int64_t> buffer_bytes;             ///< each buffer tensor counted once
  std::optional<std::vector<MethodSignature>> methods;  ///< forward first, then in code order
  /// set when the details reached their budget (records/detail_budget.h): why, and what then
  std::optional<std::string> stopped_by;
  /// a torch.export archive's container and program (its ExportArchive record, printed first)
  std::optional<ExportArchive> export_archive;
  /// a weights file's container (its WeightsFile record, printed first)
  std::optional<WeightsFile> weights_file;
  /// a torch.export program's operator calls per module (--operators), in module order
  std::optional<std::vector<OperatorCount>> operators;
  /// a torch.export program's graph signature (--signature)
  std::optional<GraphSignature> graph_signature;
  /// a checkpoint's tensors outside its state dict (an optimizer's state), with --tensors:
  /// kind "checkpoint", on the root under their whole keys, printed after the modules and the
  /// checkpoint's values (contract 11.2: model first)
  std::vector<TensorMetadata> checkpoint_tensors;

  friend bool operator==(const ModelDetails& a, const ModelDetails& b) {
    return a.parameter_bytes == b.parameter_bytes && a.buffer_bytes == b.buffer_bytes &&
           a.methods == b.methods && a.stopped_by == b.stopped_by &&
           a.export_archive == b.export_archive && a.weights_file == b.weights_file &&
           a.checkpoint_tensors == b.checkpoint_tensors && a.operators == b.operators &&
           a.graph_signature == b.graph_signature;
  }
};

/// Static metadata for one registered module in a constructed model.
class ModuleMetadata {
 public:
  ModuleMetadata(std::string path, std::optional<std::string> module_type,
                 std::int64_t direct_parameters, std::optional<std::int64_t> trainable_parameters,
                 std::optional<std::int64_t> direct_buffers, std::optional<bool> training,
                 ModuleDetails details = {})
      : details_(std::move(details)),
        path_(std::move(path)),
        module_type_(std::move(module_type)),
        direct_parameters_(direct_parameters),
        trainable_parameters_(trainable_parameters),
        direct_buffers_(direct_buffers),
        training_(training) {}

  /// Registration path from the model root, "<root>" at the root.
  const std::string& path() const { return path_; }
  /// Python-qualified type of the module (TorchScript mangling removed); none where the file
  /// does not record it (a torch.export module no node of which ran, contract 10.3).
  const std::optional<std::string>& module_type() const { return module_type_; }
  /// Elements in parameters registered directly on this module (None slots count zero).
  std::int64_t direct_parameters() const { return direct_parameters_; }
  /// Elements in gradient-enabled parameters registered directly on this module; none where the
  /// file does not say which are (a weights file).
  std::optional<std::int64_t> trainable_parameters() const { return trainable_parameters_; }
  /// Elements in tensors registered directly on this module as buffers; none where the file
  /// does not tell buffers from parameters (a weights file).
  std::optional<std::int64_t> direct_buffers() const { return direct_buffers_; }
  /// The module's training flag at inspection time; none where the file records no mode
  /// (torch.export).
  std::optional<bool> training() const { return training_; }
  /// Tensors and attributes, where asked for.
  const ModuleDetails& details() const { return details_; }

  friend bool operator==(const ModuleMetadata& a, const ModuleMetadata& b) {
    return a.path_ == b.path_ && a.module_type_ == b.module_type_ &&
           a.direct_parameters_ == b.direct_parameters_ &&
           a.trainable_parameters_ == b.trainable_parameters_ &&
           a.direct_buffers_ == b.direct_buffers_ && a.training_ == b.training_ &&
           a.details_ == b.details_;
  }
  friend bool operator!=(const ModuleMetadata& a, const ModuleMetadata& b) { return !(a == b); }

 private:
  ModuleDetails details_;
  std::string path_;
  std::optional<std::string> module_type_;
  std::int64_t direct_parameters_;
  std::optional<std::int64_t> trainable_parameters_;
  std::optional<std::int64_t> direct_buffers_;
  std::optional<bool> training_;
};

/// Registered-module metadata for an already constructed model.
class ModelMetadata {
 public:
  ModelMetadata(std::optional<std::string> model_type, std::int64_t total_parameters,
                std::optional<std::int64_t> trainable_parameters,
                std::vector<ModuleMetadata> modules,
                ModelDetails details = {})
      : model_type_(std::move(model_type)),
        total_parameters_(total_parameters),
        trainable_parameters_(trainable_parameters),
        modules_(std::move(modules)),
        details_(std::move(details)) {}

  /// Python-qualified type of the root module (none where the file does not record it).
  const std::optional<std::string>& model_type() const { return model_type_; }
  /// Elements in all parameters reachable from the root, each tensor counted once.
  std::int64_t total_parameters() const { return total_parameters_; }
  /// Elements in all gradient-enabled reachable parameters, each tensor counted once; none for a
  /// weights file.
  std::optional<std::int64_t> trainable_parameters() const { return trainable_parameters_; }
  /// Unique registered modules in named_modules order, the root first.
  const std::vector<ModuleMetadata>& modules() const { return modules_; }
  /// Byte totals and method signatures, where asked for.
  const ModelDetails& details() const { return details_; }

  friend bool operator==(const ModelMetadata& a, const ModelMetadata& b) {
    return a.model_type_ == b.model_type_ && a.total_parameters_ == b.total_parameters_ &&
           a.trainable_parameters_ == b.trainable_parameters_ && a.modules_ == b.modules_ &&
           a.details_ == b.details_;
  }
  friend bool operator!=(const ModelMetadata& a, const ModelMetadata& b) { return !(a == b); }

 private:
  std::optional<std::string> model_type_;
  std::int64_t total_parameters_;
  std::optional<std::int64_t> trainable_parameters_;
  std::vector<ModuleMetadata> modules_;
  ModelDetails details_;
};

/// Why a model's element counts cannot be reported (both readers say the same).
inline constexpr const char* kCountOverflowMessage =
    "the model's element counts overflow 64 bits, which no real model's can";

/// The most bytes the module paths of one model may take together (each path holds its parent's:
/// a deep tree of long names is quadratic in its depth; real models stay under a megabyte, the
/// 5,054-module fixture at 250 KB), and what the readers say past it.
inline constexpr std::size_t kMaxModulePathBytes = std::size_t{64} << 20;
inline constexpr const char* kModulePathsTooLongMessage =
    "its module paths add up to more than 64 MiB (a deep tree of long names), which no real "
    "model's do";

/// The path of the model root in the records.
inline constexpr const char* kRootPath = "<root>";

/// Why a module at `parent` (its path, "" for the root) cannot have a submodule named `name`, or
/// "" when it can. nn.Module.add_module refuses an empty name and one holding '.'; an archive
/// crafted with one would give a module another module's path (a child "a.b" and a's child "b";
/// "" and its parent), so every reader refuses it with this reason rather than print both.
inline std::string unfit_submodule_name(const std::string& parent, std::string_view name) {
  if (!name.empty() && name.find('.') == std::string_view::npos) return "";
  const std::string where = "a submodule of '" + (parent.empty() ? kRootPath : parent) + "'";
  if (name.empty())
    return where +
           " has an empty name, which nn.Module.add_module refuses: its path would be its "
           "parent's";
  return where + " is named '" + std::string(name) +
         "': a module's name cannot hold '.' (nn.Module.add_module refuses it), or its path "
         "would be the path of another module";
}

/// Whether `name`, an attribute's or a method's, is TorchScript's own bookkeeping
/// (`_is_full_backward_hook`, `__annotations__`, `__getstate__`, ...): a name starting with `_`,
/// which the attribute and signature records leave out (both readers say the same).
inline bool is_bookkeeping_name(std::string_view name) { return !name.empty() && name[0] == '_'; }

}  // namespace vin::diagnostics
