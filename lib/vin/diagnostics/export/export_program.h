// A torch.export program as a runner needs it (contract 12): its graph's nodes with their
// arguments read from the serialized schema's unions, its nested graphs (cond, while_loop, the
// wrap_* operators), its graph signature, the module each node ran in, module_call_graph's
// signatures, range_constraints and where each parameter, buffer and constant lies. Read as
// data, within bounds, without LibTorch: the interpreter (export_run/) resolves the operators
// and makes the tensors.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "vin/diagnostics/container/zip_archive.h"
#include "vin/diagnostics/export/export_archive.h"
#include "vin/diagnostics/text/dtypes.h"

namespace vin::diagnostics {

/// The most nodes a program may hold, all its graphs together (a 70B-parameter LLM's export has
/// a few hundred thousand), and how deep control-flow graphs may nest.
inline constexpr std::size_t kMaxProgramNodes = 4'000'000;
inline constexpr std::size_t kMaxGraphNesting = 32;

/// One value of the serialized schema's Argument union, as written.
struct ProgramArgument {
  enum class Kind {
    none,              ///< as_none
    tensor,            ///< as_tensor: names[0]
    tensors,           ///< as_tensors: names
    optional_tensor,   ///< as_optional_tensor: names[0] or nothing for None
    optional_tensors,  ///< as_optional_tensors: each name or nothing for None
    integer,           ///< as_int: ints[0]
    integers,          ///< as_ints
    real,              ///< as_float: reals[0] (inf and nan as written)
    reals,             ///< as_floats
    boolean,           ///< as_bool: ints[0] (0 or 1)
    booleans,          ///< as_bools
    string,            ///< as_string: strings[0]
    strings,           ///< as_strings
    sym_int,           ///< as_sym_int: names[0] (a symbol's value) or ints[0] (a constant)
    sym_ints,          ///< as_sym_ints: per element, names[i] or ints[i]
    sym_float,         ///< as_sym_float: names[0] or reals[0]
    sym_floats,        ///< as_sym_floats
    sym_bool,          ///< as_sym_bool: names[0] or ints[0]
    sym_bools,         ///< as_sym_bools
    scalar_type,       ///< as_scalar_type: dtype
    memory_format,     ///< as_memory_format: ints[0] in the schema's numbering (below)
    layout,            ///< as_layout: ints[0] in the schema's numbering
    device,            ///< as_device: strings[0] its type, ints (empty or one) its index
    graph,             ///< as_graph: graph, the index of the nested graph in ExportProgram
    complex,           ///< as_complex: reals[0] + reals[1] i
    other,             ///< any other variant (custom objects, operators, dicts): `variant`
  };
  Kind kind = Kind::none;
  std::string variant;  ///< as written ("as_tensor"), for messages
  std::vector<std::optional<std::string>> names;
  std::vector<std::int64_t> ints;
  std::vector<double> reals;
  std::vector<std::string> strings;
  const Dtype* dtype = nullptr;
  std::size_t graph = 0;
};

/// The schema's MemoryFormat and Layout numbering (torch/_export/serde/schema.py).
enum class SchemaMemoryFormat { unknown = 0, contiguous = 1, channels_last = 2,
                                channels_last_3d = 3, preserve = 4 };
enum class SchemaLayout { unknown = 0, sparse_coo = 1, sparse_csr = 2, sparse_csc = 3,
                          sparse_bsr = 4, sparse_bsc = 5, mkldnn = 6, strided = 7 };

/// One module a node ran in: its nn_module_stack entry.
struct ProgramFrame {
  std::string path;              ///< dotted from the root ("" the root)
  std::string type;              ///< its qualified class
  std::int64_t call_index = 0;   ///< the entry key's `@N` (its N-th call), else 0
  std::string key;               ///< the entry's key as written (`L__self___block@1`)
};

/// One call_function node.
struct ProgramNode {
  std::string target;  ///< as written: `torch.ops.aten.conv2d.default`, `_operator.add`
  std::string name;    ///< how messages name it: its name, or its place and target
  struct Input {
    std::string name;  ///< the schema argument it is given for ("" where not written)
    ProgramArgument arg;
    bool keyword = false;  ///< ArgumentKind KEYWORD
  };
  std::vector<Input> inputs;
  std::vector<ProgramArgument> outputs;
  /// the modules it ran in, outermost first; empty for a node without a stack (unflatten's
  /// empty-stack marker); an entry whose path is not a module path unambiguously left out
  std::vector<ProgramFrame> frames;
  bool has_stack = false;  ///< whether the node had an nn_module_stack at all
};

/// One graph: the program's, or a nested one.
struct ProgramGraph {
  std::vector<ProgramArgument> inputs;  ///< its placeholders
  std::vector<ProgramArgument> outputs;
  std::vector<ProgramNode> nodes;
  std::size_t depth = 0;  ///< 0 for the program's graph, 1 for a graph nested in it, ...
};

/// One entry of the graph signature's input_specs.
struct ProgramInputSpec {
  enum class Kind { user_input, parameter, buffer, constant_tensor, constant_input,
                    custom_obj, token, other };
  Kind kind = Kind::other;
  std::string variant;  ///< as written ("parameter", "tensor_constant", ...)
  std::string arg;      ///< the placeholder's name ("" for a constant_input)
  std::string target;   ///< the parameter's, buffer's or constant's dotted name
  /// a user input's argument (its kind: a tensor, a symbolic int, a constant), or a
  /// constant_input's value
  ProgramArgument value;
};

/// One entry of the graph signature's output_specs.
struct ProgramOutputSpec {
  std::string kind;  ///< "user_output", "buffer_mutation", "loss_output", ...
  ProgramArgument value;
  std::string target;  ///< a mutated buffer's name
};

/// A module's signature from module_call_graph (the root's always; others where the export
/// preserved it).
struct ProgramCallSignature {
  std::string fqn;  ///< "" the root
  bool has_signature = false;
  std::vector<ProgramArgument> inputs;
  std::vector<ProgramArgument> outputs;
  std::string in_spec;   ///< pytree's spec of (args, kwargs) as JSON text
  std::string out_spec;  ///< of the outputs
  std::vector<std::string> forward_arg_names;
};

/// A symbol's range from range_constraints (nothing for unbounded).
struct ProgramRange {
  std::string symbol;
  std::optional<std::int64_t> min, max;
};

/// A user input's tensor as the graph records it: its dtype and sizes, each an integer or a
/// symbol's name (a dimension that varies).
struct ProgramInputMeta {
  std::string name;
  const Dtype* dtype = nullptr;
  struct Size {
    std::optional<std::int64_t> value;
    std::string symbol;  ///< the symbol's text where the size is symbolic ("s0", "2*s0")
  };
  std::vector<Size> sizes;
};

/// A parameter, buffer or constant: which placeholder it feeds and where its elements lie.
struct ProgramWeight {
  std::string name;  ///< dotted ("features.0.weight")
  std::string kind;  ///< "parameter", "buffer" or "constant"
  const Dtype* dtype = nullptr;
  std::vector<std::int64_t> shape, strides;
  std::int64_t storage_offset = 0;
  bool requires_grad = false;
  /// which storage: a member of the archive (raw, torch 2.9 on), or ENTRY:KEY for a storage of a
  /// nested torch.save file (torch 2.1-2.8); tied names share it
  std::string storage;
};

/// The program.
struct ExportProgram {
  std::string file;    ///< the archive
  std::string entry;   ///< the program's member, which messages name
  std::string torch_version;
  std::vector<ProgramGraph> graphs;  ///< [0] the program's graph, then the nested ones
  std::vector<ProgramInputSpec> inputs;
  std::vector<ProgramOutputSpec> outputs;
  std::vector<ProgramCallSignature> calls;
  std::vector<ProgramRange> ranges;
  std::vector<ProgramInputMeta> input_meta;  ///< each user input tensor's
  std::vector<ProgramWeight> weights;
  /// every module's path in named_modules() order, the root's ("") first, as inspect-model
  /// lists them
  std::vector<std::string> module_paths;
  /// each module's class as its nodes' nn_module_stack names it (the root's under ""), where
  /// one does: inspect-model's module_type
  std::unordered_map<std::string, std::string> module_types;
};

/// Reads the program `model` ("" for the only one, or "model") of a torch.export archive (any
/// layout issue 46's reader reads). Throws Error naming the file, the entry and the node for
/// what is not what torch writes, past a bound, or an AOTInductor package (no program).
ExportProgram read_export_program(const ZipArchive& zip, const std::string& model = "");

/// The bytes of one storage a ProgramWeight names (its `storage`), read from the archive;
/// each storage read once however many weights name it. Throws Error naming it.
class ProgramStorages {
 public:
  explicit ProgramStorages(const ZipArchive& zip) : zip_(zip) {}
  std::string read(const std::string& storage);

 private:
  const ZipArchive& zip_;
  std::map<std::string, std::unique_ptr<ZipArchive>> nested_;  // nested torch.save files
};

/// "torch.ops.aten.add.Tensor" -> {"aten::add", "Tensor"}; "torch.ops.aten.relu.default" ->
/// {"aten::relu", ""}; nothing for a target that is not torch.ops.NAMESPACE.NAME.OVERLOAD.
std::optional<std::pair<std::string, std::string>> operator_of_target(const std::string& target);

}  // namespace vin::diagnostics
