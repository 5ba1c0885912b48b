// What inspect-model says of a torch.export archive beyond its modules (contract 10.3): the
// ExportArchive record, first of its records. Plain values; nothing here depends on LibTorch.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace vin::diagnostics {

/// One compiled model of an AOTInductor package: the device and platform it was compiled for.
struct AotiModel {
  std::string model;
  std::optional<std::string> device;    ///< its metadata's AOTI_DEVICE_KEY: "cpu", "cuda"
  std::optional<std::string> platform;  ///< "linux-x86_64", as Python's sysconfig names it

  friend bool operator==(const AotiModel& a, const AotiModel& b) {
    return a.model == b.model && a.device == b.device && a.platform == b.platform;
  }
};

/// The container torch.export.save (or AOTInductor's packager) wrote.
struct ExportArchive {
  std::string file;    ///< as the command line named it
  std::string layout;  ///< "export_zip" (torch 2.1-2.7), "pt2_archive" (2.8 on), "aoti_package"
  /// the program's schema version: "8.20", or an integer schema as "2"; none for a package
  /// without a program
  std::optional<std::string> schema_version;
  std::optional<std::string> torch_version;  ///< as the archive records it (none before 2.5)
  std::vector<std::string> models;           ///< the programs' names ("model" in a flat zip)
  std::vector<std::string> extra_files;      ///< by name, without their folder
  /// an AOTInductor package's compiled models (none for an archive with a program)
  std::optional<std::vector<AotiModel>> aoti;

  friend bool operator==(const ExportArchive& a, const ExportArchive& b) {
    return a.file == b.file && a.layout == b.layout && a.schema_version == b.schema_version &&
           a.torch_version == b.torch_version && a.models == b.models &&
           a.extra_files == b.extra_files && a.aoti == b.aoti;
  }
};

/// One input or output of an exported program's graph signature (--signature): its kind as the
/// schema names it (`user_input`, `parameter`, `buffer`, `constant_tensor`, `custom_obj`,
/// `token`, `constant_input`; `user_output`, `buffer_mutation`, `user_input_mutation`,
/// `loss_output`, `gradient_to_parameter`, ...), the graph's name for it, and what it stands
/// for (a parameter's, buffer's or constant's name; the mutated input's) as the archive writes it.
struct GraphSignatureEntry {
  std::string kind;
  std::optional<std::string> name;    ///< the placeholder or output node; none for a constant
  std::optional<std::string> target;  ///< none for user inputs and outputs, tokens

  friend bool operator==(const GraphSignatureEntry& a, const GraphSignatureEntry& b) {
    return a.kind == b.kind && a.name == b.name && a.target == b.target;
  }
};

/// The graph signature of the program (its GraphSignature record).
struct GraphSignature {
  std::vector<GraphSignatureEntry> inputs;
  std::vector<GraphSignatureEntry> outputs;

  friend bool operator==(const GraphSignature& a, const GraphSignature& b) {
    return a.inputs == b.inputs && a.outputs == b.outputs;
  }
};

/// How often the program calls one operator inside one module (--operators): the module is the
/// innermost entry of the node's nn_module_stack, the root for a node without one.
struct OperatorCount {
  std::string module_path;  ///< "<root>" or the dotted path
  std::string op;           ///< the node's target without "torch.ops.": "aten.linear.default"
  std::int64_t calls = 0;

  friend bool operator==(const OperatorCount& a, const OperatorCount& b) {
    return a.module_path == b.module_path && a.op == b.op && a.calls == b.calls;
  }
};

}  // namespace vin::diagnostics
