// The .pt2 reader (export_detail: not for other folders): one program of a torch.export archive
// read as data, its methods in four files: export_archive.cpp (the entries, the models, the
// records), export_weights.cpp (the parameters, buffers and constants, the storages they lie
// in), export_graph.cpp (the modules the program names, its signatures, its operators) and
// export_program.cpp (the program as a runner needs it).
#pragma once

#include <cstddef>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "vin/diagnostics/container/zip_archive.h"
#include "vin/diagnostics/export/export_archive.h"
#include "vin/diagnostics/export/export_program.h"
#include "vin/diagnostics/export/export_schema.h"
#include "vin/diagnostics/records/model_metadata.h"

namespace vin::diagnostics::export_detail {

class ExportReader {
 public:
  ExportReader(const ZipArchive& zip, ExportLayout layout, const InspectDetails& details)
      : zip_(zip), layout_(layout), details_(details) {
    if (layout_ == ExportLayout::pt2_archive) root_ = zip_.first_folder();
  }

  ModelMetadata read(const std::string& wanted);

  // the program a runner needs (export_program.cpp)
  ExportProgram program(const std::string& wanted);

  // a node as a message names it: its name where the program records one (torch 2.5 on), else
  // its place and target
  static std::string node_name(const Json& node, std::size_t index);

 private:
  // One program's JSON, read, with its modules and tensors walked and the module paths added in
  // named_modules() order (module_call_graph's, the state dict's, the tensors', the nodes'): how
  // read() and program() both begin.
  struct OpenedProgram {
    std::string model, entry, schema_version;
    std::optional<std::string> torch_version;
    Json json;
    std::vector<std::string> called, stacked;  // module_paths()'s
    const Json& graph_module() const { return *field(json, "graph_module", entry); }
    const Json& graph() const {
      return *field(graph_module(), "graph", entry + ": graph_module");
    }
  };
  OpenedProgram open_program(const std::string& model);

  std::vector<std::string> model_names() const;

  std::vector<std::string> extra_files() const;

  std::string chosen_model(const std::vector<std::string>& names, const std::string& wanted) const;

  std::string program_entry(const std::string& model) const;

  static std::string schema_version(const Json& program, const std::string& entry);

  // the parameters, buffers and constants: by the graph signature's names, with the TensorMeta
  // of their placeholders; a PT2 Archive's weights config where it has one (2.9 on: the storage
  // each lies in, tied names sharing one)
  void read_tensors(const Json& graph_module, const Json& graph, const std::string& model,
                    const std::string& entry);

  // the tied parameter whose placeholder is `arg`: a name MODULE.LEAF, MODULE one of the
  // modules the program names, whose placeholder is `arg`
  std::string recover_tied_name(const std::string& arg, const std::string& prefix,
                                const std::string& leaf) const;

  // data/weights/<model>_weights_config.json (torch 2.9 on): {"config": {name: {path_name,
  // is_param, use_pickle, tensor_meta}}}; the raw storage is the member FOLDER + path_name
  bool read_weights_config(const std::string& entry, const std::string& folder);

  // A nested torch.save of {name: tensor} (the state dict, or the constants), read by the one
  // torch.save reader (torch_save_file.h): the storage each tensor lies in (tied names share
  // one), its record's CRC and, with --tensors, its elements' CRC, and the tensors the
  // signature does not list (the parameters of a module no node uses stay in the state dict).
  // `unlisted_kind`: what such a tensor is when its pickle does not say (constants file).
  void read_nested_state(const std::string& entry, const std::string& unlisted_kind);

  // Two names of one storage (a tied weight's) must describe it alike: torch.load keeps the
  // first description and reads the second name's tensor through it, so storages whose
  // dtypes or sizes differ are not what torch writes (contract 10.4)
  static void same_storage(const std::pair<std::string, SavedTensor>& first,
                           const std::pair<std::string, SavedTensor>& second,
                           const ZipArchive& inner, const std::string& entry);

  // the module paths of module_call_graph, and those of the nodes' nn_module_stack (with the
  // types of their modules), each in the order met; each node's innermost module, for the
  // operators
  std::pair<std::vector<std::string>, std::vector<std::string>> module_paths(
      const Json& graph_module, const Json& graph, const std::string& entry);

  // the modules the call graph and the signature's tensor names name: what a sanitised module
  // key of an nn_module_stack may stand for (a damaged spec is refused where it is read)
  static std::set<std::string> named_modules(const Json& graph_module,
                                             const std::vector<std::string>& called);

  // one input_specs or output_specs list as written: each spec's kind, names and target,
  // and its argument
  struct Spec {
    GraphSignatureEntry entry;
    const Json* arg = nullptr;
    const Json* value = nullptr;  // a constant_input's ConstantValue
  };

  static std::vector<Spec> specs(const Json& graph_module, const char* key,
                                 const std::string& entry);

  // the graph signature's inputs and outputs as written (their kinds, names and targets)
  static GraphSignature graph_signature(const Json& graph_module, const std::string& entry);

  // forward as the program takes it: one argument per user input, in order (a tensor's
  // dtype and shape from the graph's TensorMeta), the user outputs, and range_constraints'
  // symbols with their ranges
  static MethodSignature forward_signature(const Json& program, const Json& graph_module,
                                           const Json& graph, const std::string& entry);

  // a user input or output: {as_tensor: {name}} and the other Argument variants
  static ReturnSignature user_value(const Json& arg, const Json& graph, const std::string& entry);

  // An Argument's (or a ConstantValue's) type as a PyTorch user writes it, as a TorchScript
  // signature spells it: every variant the schema (torch 2.1-2.14) has, a custom object by its
  // class; a variant of a newer schema by its name
  static std::string argument_type(const std::string& variant, const Json& value);

  // the graph's name for an argument: {name} (TensorArgument), {as_tensor: {name}},
  // {as_sym_int: {as_name}}, ...; none for a constant
  static std::optional<std::string> argument_name(const Json& arg);

  // each node's target counted under the innermost module of its nn_module_stack (the root
  // without one), the modules in named_modules() order, each module's operators in the order
  // first called; nodes of control-flow subgraphs are their higher-order operator's
  std::vector<OperatorCount> operator_counts(const Json& graph, const std::string& entry) const;

  // the tensors by name, each name once
  NamedTensor* tensor_named(const std::string& name);

  NamedTensor& add_tensor(NamedTensor t);

  void add_path(const std::string& path);

  // The modules only the nodes name (no tensor of theirs, and a call graph of the root alone,
  // as torch 2.1-2.5 wrote it): each placed among its siblings after the sibling that ran
  // before it (first among them if none did), so a ReLU between two Linears of a Sequential,
  // or a pooling layer between a body and a head, stays where the model registered it.
  void add_executed_paths(const std::vector<std::string>& executed);

  ModelMetadata describe() const;

  const ZipArchive& zip_;

  ExportLayout layout_;

  InspectDetails details_;

  std::string root_;
  // the PT2 Archive's root folder, with its '/'
  std::vector<NamedTensor> tensors_;

  std::unordered_map<std::string, std::size_t> tensor_index_;
  // into tensors_
  std::vector<std::string> state_dict_order_;
  // a nested torch.save state dict's names
  std::set<std::string> paths_;

  std::set<std::string> known_modules_;
  // the modules the program names
  std::unordered_map<std::string, std::vector<std::string>> children_;

  std::unordered_map<std::string, std::string> types_;

  std::vector<std::string> node_modules_;  // each node's innermost module ("" the root)
};

}  // namespace vin::diagnostics::export_detail
