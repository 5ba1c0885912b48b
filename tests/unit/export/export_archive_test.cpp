// The .pt2 reader on archives written here byte by byte (a program's JSON, a nested torch.save
// whose pickle is written opcode by opcode) in the spellings torch 2.1-2.14 use: requires_grad
// as torch 2.2 saved it, forward's non-tensor inputs, nn_module_stack entries written as Python
// expressions, and the stack entries and storages contract 10.4 refuses.
#include <doctest/doctest.h>
#include <zip.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "vin/diagnostics/export/export_archive.h"
#include "vin/diagnostics/export/export_module_stack.h"
#include "vin/diagnostics/records/error.h"

using namespace vin::diagnostics;

namespace {

// The bytes of a zip of `members` (name, bytes), all stored, as torch.save writes them.
std::string zip_bytes(const std::vector<std::pair<std::string, std::string>>& members) {
  const std::string path =
      (std::filesystem::temp_directory_path() / "vin_export_archive_test.zip").string();
  int code = 0;
  zip_t* z = zip_open(path.c_str(), ZIP_CREATE | ZIP_TRUNCATE, &code);
  REQUIRE(z != nullptr);
  for (const auto& [name, bytes] : members) {
    zip_source_t* s = zip_source_buffer(z, bytes.data(), bytes.size(), 0);
    REQUIRE(s != nullptr);
    const zip_int64_t index = zip_file_add(z, name.c_str(), s, 0);
    REQUIRE(index >= 0);
    REQUIRE(zip_set_file_compression(z, static_cast<zip_uint64_t>(index), ZIP_CM_STORE, 0) == 0);
  }
  REQUIRE(zip_close(z) == 0);
  std::ifstream in(path, std::ios::binary);
  std::string out((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::filesystem::remove(path);
  return out;
}

// A protocol 2 pickle written opcode by opcode, as torch.save writes a state dict.
class PickleWriter {
 public:
  PickleWriter() { bytes_ = "\x80\x02"; }
  PickleWriter& op(char c) {
    bytes_ += c;
    return *this;
  }
  PickleWriter& global(const std::string& module, const std::string& name) {
    bytes_ += "c" + module + "\n" + name + "\n";
    return *this;
  }
  PickleWriter& text(const std::string& s) {
    bytes_ += 'X';
    for (int i = 0; i < 4; ++i) bytes_ += static_cast<char>(s.size() >> (8 * i) & 0xff);
    bytes_ += s;
    return *this;
  }
  PickleWriter& integer(std::int32_t n) {
    bytes_ += 'J';
    for (int i = 0; i < 4; ++i)
      bytes_ += static_cast<char>(static_cast<std::uint32_t>(n) >> (8 * i) & 0xff);
    return *this;
  }
  PickleWriter& ints(const std::vector<std::int32_t>& values) {
    op('(');
    for (const std::int32_t v : values) integer(v);
    return op('t');
  }
  // _rebuild_tensor_v2(('storage', torch.FloatStorage, key, 'cpu', storage_numel), 0, shape,
  // strides, False, OrderedDict()), inside _rebuild_parameter(..., requires_grad, OrderedDict())
  // when `requires_grad` is given: torch.save of an nn.Parameter
  PickleWriter& tensor(const std::string& key, std::int32_t storage_numel,
                       const std::vector<std::int32_t>& shape, std::optional<bool> requires_grad) {
    if (requires_grad) global("torch._utils", "_rebuild_parameter").op('(');
    global("torch._utils", "_rebuild_tensor_v2").op('(').op('(').text("storage");
    global("torch", "FloatStorage").text(key).text("cpu").integer(storage_numel).op('t').op('Q');
    std::vector<std::int32_t> strides(shape.size(), 1);
    for (std::size_t i = shape.size(); i-- > 1;) strides[i - 1] = strides[i] * shape[i];
    integer(0).ints(shape).ints(strides).op('\x89');
    global("collections", "OrderedDict").op(')').op('R').op('t').op('R');
    if (requires_grad)
      op(*requires_grad ? '\x88' : '\x89')
          .global("collections", "OrderedDict")
          .op(')')
          .op('R')
          .op('t')
          .op('R');
    return *this;
  }
  std::string done() { return bytes_ + "."; }

 private:
  std::string bytes_;
};

std::string float_bytes(int n) { return std::string(static_cast<std::size_t>(n) * 4, '\0'); }

// A nested torch.save of {"fc.weight": [3, 4], "fc.bias": [3]}, both nn.Parameters as
// torch.save pickles them (_rebuild_parameter), trainable or not; where `alias_numel` is given,
// a third name, "fc.alias", names the bias's storage again, described with that many elements
std::string state_dict(bool requires_grad, std::optional<std::int32_t> alias_numel = {}) {
  PickleWriter p;
  p.op('}').op('(');
  p.text("fc.weight").tensor("0", 12, {3, 4}, requires_grad);
  p.text("fc.bias").tensor("1", 3, {3}, requires_grad);
  if (alias_numel) p.text("fc.alias").tensor("1", *alias_numel, {3}, requires_grad);
  p.op('u');
  return zip_bytes({{"archive/data.pkl", p.done()},
                    {"archive/byteorder", "little"},
                    {"archive/data/0", float_bytes(12)},
                    {"archive/data/1", float_bytes(6)}});
}

std::string tensor_meta(const std::string& sizes, bool requires_grad = false) {
  return R"({"dtype": 7, "sizes": [)" + sizes + R"(], "requires_grad": )" +
         (requires_grad ? "true" : "false") +
         R"(, "device": {"type": "cpu", "index": null}, "storage_offset": 0, "layout": 7})";
}

// A flat zip program of fc.weight, fc.bias and the user inputs `inputs` (input_specs, as JSON
// text), one node per nn_module_stack of `stacks`
std::string program(const std::vector<std::string>& stacks, const std::string& inputs = "") {
  std::string nodes;
  for (const std::string& stack : stacks) {
    std::string quoted;
    for (const char c : stack)
      quoted += c == '"' || c == '\\' ? std::string("\\") + c : std::string(1, c);
    nodes += std::string(nodes.empty() ? "" : ",") +
             R"({"target": "torch.ops.aten.linear.default", "inputs": [], "outputs": [],
                 "metadata": {"nn_module_stack": ")" +
             quoted + R"("}})";
  }
  return R"({"schema_version": {"major": 8, "minor": 2}, "torch_version": "2.6.0",
    "graph_module": {
      "graph": {"inputs": [], "outputs": [], "nodes": [)" +
         nodes + R"(],
        "tensor_values": {"p_fc_weight": )" +
         tensor_meta(R"({"as_int": 3}, {"as_int": 4})") + R"(, "p_fc_bias": )" +
         tensor_meta(R"({"as_int": 3})") + R"(, "x": )" +
         tensor_meta(R"({"as_int": 2}, {"as_int": 4})") + R"(},
        "sym_int_values": {}, "sym_bool_values": {}},
      "signature": {"input_specs": [
          {"parameter": {"arg": {"name": "p_fc_weight"}, "parameter_name": "fc.weight"}},
          {"parameter": {"arg": {"name": "p_fc_bias"}, "parameter_name": "fc.bias"}},
          {"user_input": {"arg": {"as_tensor": {"name": "x"}}}})" +
         inputs + R"(],
        "output_specs": [{"user_output": {"arg": {"as_tensor": {"name": "x"}}}}]},
      "module_call_graph": [{"fqn": ""}]},
    "opset_version": {"aten": 10}, "range_constraints": {}})";
}

// inspect-model of the flat zip holding `program_json` and `nested` as its state dict
ModelMetadata described(const std::string& program_json, const std::string& nested,
                        InspectDetails details = {}) {
  const std::string bytes = zip_bytes({{"serialized_exported_program.json", program_json},
                                       {"serialized_state_dict.pt", nested},
                                       {"version", "1"}});
  const ZipArchive zip(InputFile::from_bytes("net.pt2", bytes));
  return read_export_archive(zip, details);
}

const std::string kRoot = "L__self__,,__main__.Net";
const std::string kFc = ";L__self___fc,fc,torch.nn.modules.linear.Linear";

std::vector<std::string> paths_of(const ModelMetadata& model) {
  std::vector<std::string> out;
  for (const ModuleMetadata& m : model.modules()) out.push_back(m.path());
  return out;
}

}  // namespace

TEST_CASE("requires_grad is the state dict's where torch 2.2 saved nn.Parameters") {
  // the program's TensorMeta says requires_grad false for every parameter, as torch 2.2's do
  // (KladovValentin/hades-pid's archive: 366,087 parameters, 0 trainable before)
  for (const bool trainable : {true, false}) {
    CAPTURE(trainable);
    const ModelMetadata model =
        described(program({kRoot + kFc}), state_dict(trainable), InspectDetails::everything());
    CHECK(model.total_parameters() == 15);
    CHECK(model.trainable_parameters() == (trainable ? 15 : 0));
    REQUIRE(model.modules().size() == 2);
    CHECK(model.modules()[1].trainable_parameters() == (trainable ? 15 : 0));
    for (const TensorMetadata& t : *model.modules()[1].details().tensors)
      CHECK(t.requires_grad == trainable);
  }
}

TEST_CASE("forward's non-tensor inputs are its arguments, as a PyTorch user writes them") {
  InspectDetails details;
  details.signature = true;
  const auto arguments = [&](const std::string& inputs) {
    const ModelMetadata model =
        described(program({kRoot + kFc}, inputs), state_dict(true), details);
    REQUIRE(model.details().methods);
    std::vector<std::pair<std::string, std::string>> out;
    for (const ArgumentSignature& a : model.details().methods->front().arguments) {
      CHECK_FALSE(a.has_default);
      out.emplace_back(a.name, a.type);
    }
    return out;
  };
  using Arguments = std::vector<std::pair<std::string, std::string>>;
  SUBCASE("torch 2.6 on: constant_input, each with its name") {
    CHECK(arguments(R"(, {"constant_input": {"name": "scale", "value": {"as_float": 2.0}}},
                       {"constant_input": {"name": "n", "value": {"as_int": 3}}},
                       {"constant_input": {"name": "flag", "value": {"as_bool": false}}},
                       {"constant_input": {"name": "mode", "value": {"as_string": "fast"}}},
                       {"constant_input": {"name": "bias", "value": {"as_none": true}}},
                       {"user_input": {"arg": {"as_sym_int": {"as_name": "steps"}}}},
                       {"user_input": {"arg": {"as_sym_float": {"as_name": "t"}}}},
                       {"user_input": {"arg": {"as_sym_bool": {"as_name": "b"}}}})") ==
          Arguments{{"x", "Tensor"},
                    {"scale", "float"},
                    {"n", "int"},
                    {"flag", "bool"},
                    {"mode", "str"},
                    {"bias", "None"},
                    {"steps", "SymInt"},
                    {"t", "SymFloat"},
                    {"b", "SymBool"}});
  }
  SUBCASE("torch 2.1-2.2: every variant written, the unused null; a constant as its value") {
    CHECK(arguments(R"(, {"user_input": {"arg": {"as_none": null, "as_tensor": null,
                                                  "as_float": 0.5, "as_int": null}},
                          "parameter": null, "buffer": null},
                       {"user_input": {"arg": {"as_none": [], "as_float": null}},
                          "parameter": null},
                       {"user_input": null, "constant_input": {"name": "k", "value": {
                          "as_none": null, "as_int": 0, "as_float": null}}})") ==
          Arguments{{"x", "Tensor"}, {"", "float"}, {"", "None"}, {"k", "int"}});
  }
  SUBCASE("the other variants: lists, dtypes, devices, a custom object by its class") {
    CHECK(arguments(R"(, {"user_input": {"arg": {"as_ints": [1, 2]}}},
                       {"user_input": {"arg": {"as_floats": [1.0]}}},
                       {"user_input": {"arg": {"as_tensors": [{"name": "x"}]}}},
                       {"user_input": {"arg": {"as_scalar_type": 7}}},
                       {"user_input": {"arg": {"as_device": {"type": "cpu"}}}},
                       {"user_input": {"arg": {"as_custom_obj": {"name": "obj",
                          "class_fqn": "__torch__.torch.classes.my.Stack"}}}})") ==
          Arguments{{"x", "Tensor"},
                    {"", "List[int]"},
                    {"", "List[float]"},
                    {"", "List[Tensor]"},
                    {"", "torch.dtype"},
                    {"", "torch.device"},
                    {"obj", "torch.classes.my.Stack"}});
  }
}

TEST_CASE("nn_module_stack entries split as torch 2.1 and 2.2-2.14 write them") {
  SUBCASE("key,path,type; a path's own commas and semicolons inside brackets and quotes") {
    const auto entries = split_module_stack(
        "L__self__,,__main__.Net;fn_2_0,getattr(getattr(L['fn'], '2'), '0'),torch.nn.Linear;"
        "h,L['self'].heads['a;b,c'],torch.nn.Linear");
    REQUIRE(entries.size() == 3);
    CHECK(entries[0].key == "L__self__");
    CHECK(entries[0].path.empty());
    CHECK(entries[0].type == "__main__.Net");
    CHECK(entries[1].key == "fn_2_0");
    CHECK(entries[1].path == "getattr(getattr(L['fn'], '2'), '0')");
    CHECK(entries[1].type == "torch.nn.Linear");
    CHECK(entries[2].path == "L['self'].heads['a;b,c']");
  }
  SUBCASE("torch 2.1: key:(path,type)") {
    const auto entries = split_module_stack(
        "L__self__:(L['self'],__main__.Net);L__self___fc:(L['self'].fc,torch.nn.Linear)");
    REQUIRE(entries.size() == 2);
    CHECK(entries[1].key == "L__self___fc");
    CHECK(entries[1].path == "L['self'].fc");
    CHECK(entries[1].type == "torch.nn.Linear");
  }
  SUBCASE("empty text: no entries") { CHECK(split_module_stack("").empty()); }
  SUBCASE("a quote or bracket of a dotted path's key splits nothing it should not") {
    // a ModuleDict key with a quote (no string: it follows no '[', '(' or ','), then one with
    // an unmatched bracket (the scan ends inside it: split at every ';', as torch's loader)
    for (const char* key : {"it's", "a[0"}) {
      const auto entries = split_module_stack(std::string("L__self__,,Net;k,heads.") + key +
                                              ",torch.nn.Linear;k2,fc,torch.nn.Linear");
      REQUIRE(entries.size() == 3);
      CHECK(entries[1].path == std::string("heads.") + key);
      CHECK(entries[2].path == "fc");
    }
    // a quote left open in a source expression: the commas still split key, path and type
    const auto open = split_module_stack("k,L['self'].fc[',x,B");
    REQUIRE(open.size() == 1);
    CHECK(open[0].path == "L['self'].fc[',x");
    CHECK(open[0].type == "B");
  }
  SUBCASE("an entry without key, path and type is refused, quoting it") {
    for (const char* text : {"fc", "k,fc", "L__self__,,A;;k,fc,B", "L__self__,,A;", ",fc,B",
                             "k,fc,", "k:(fc)", "k:(fc,B", "k:(,B)x"}) {
      const std::string entry = text;
      CAPTURE(entry);
      CHECK_THROWS_AS(split_module_stack(text), MalformedModuleStack);
    }
    CHECK_THROWS_WITH(split_module_stack("L__self__,,A;k,fc"),
                      "the nn_module_stack entry 'k,fc' does not split into key, path and type");
  }
}

TEST_CASE("nn_module_stack paths written as Python expressions are dotted where unambiguous") {
  const auto path_of = [](const std::string& path, const std::set<std::string>& known = {}) {
    const auto paths = module_stack_paths({{"L__self__", "", "Net"}, {"k", path, "Linear"}},
                                          SanitisedModules(known));
    REQUIRE(paths.size() == 2);
    CHECK(paths[0] == std::string());
    return paths[1];
  };
  using P = std::optional<std::string>;
  SUBCASE("the spellings of one module") {
    for (const char* path :
         {"layers.0", "L['self'].layers[0]", "L[\"self\"].layers[0]", "self.layers.0",
          "getattr(L['self'].layers, '0')", "getattr(self.layers, \"0\")",
          "L['self']._modules['layers']._modules['0']", "_modules.layers._modules.0",
          "L['self'].layers._modules['0']"}) {
      const std::string spelled = path;
      CAPTURE(spelled);
      CHECK(path_of(path) == P("layers.0"));
    }
    CHECK(path_of("L['self']") == P(""));
    CHECK(path_of("self") == P(""));
    CHECK(path_of("L['self'].heads['b-c']") == P("heads.b-c"));
    CHECK(path_of("heads.b-c") == P("heads.b-c"));  // a ModuleDict key as torch writes it
    CHECK(path_of("self.heads.b-c") == P("heads.b-c"));
    CHECK(path_of("selfish.x") == P("selfish.x"));
    CHECK(path_of("getattr(getattr(L['self'].body, '2').block, '0')") == P("body.2.block.0"));
  }
  SUBCASE("what is not a module path, or not one unambiguously, is left out") {
    for (const char* path :
         {"G['helper'].fc", "L['x'].fc", "L['self'].layers[-1]",
          "L['self'].layers[slice(1, None, None)]", "L['self'].layers[1:]", "L['self'].fc.weight()",
          "L['self']._parameters['w']", "layers..0", ".layers", "L['self'].heads['a.b']",
          "heads.a[0]", "L['self'].layers[0", "getattr(L['self'], 0)", "L['self'].heads['\\n']",
          "_modules", "a,b"}) {
      const std::string spelled = path;
      CAPTURE(spelled);
      CHECK(path_of(path) == std::nullopt);
    }
  }
  SUBCASE("a bare local right after the root's entry, of the root's type, is the root") {
    const SanitisedModules none({});
    // torch 2.6's strict export of an nn.Sequential root
    const auto paths =
        module_stack_paths({{"L__self__", "", "torch.nn.Sequential"},
                            {"fn", "L['fn']", "torch.nn.Sequential"},
                            {"fn_2", "getattr(L['fn'], '2')", "torch.nn.Sequential"},
                            {"fn_2_0", "getattr(getattr(L['fn'], '2'), '0')", "torch.nn.Linear"}},
                           none);
    CHECK(paths == std::vector<P>{P(""), P(""), P("2"), P("2.0")});
    // another type, or not right after the root: not known to be the root
    CHECK(module_stack_paths({{"L__self__", "", "Net"},
                              {"fn", "L['fn']", "Other"},
                              {"fn_0", "L['fn'][0]", "Linear"}},
                             none) == std::vector<P>{P(""), std::nullopt, std::nullopt});
    CHECK(module_stack_paths({{"fn", "L['fn']", "Net"}, {"fn_0", "L['fn'][0]", "Linear"}}, none) ==
          std::vector<P>{std::nullopt, std::nullopt});
  }
  SUBCASE("a sanitised module key is the one known module it can be") {
    CHECK(path_of("L__self__") == P(""));
    CHECK(path_of("L__self___relu") == P("relu"));
    CHECK(path_of("L__self___layers_0", {"layers", "layers.0"}) == P("layers.0"));
    CHECK(path_of("L__self___heads_b_c", {"heads.b-c"}) == P("heads.b-c"));
    CHECK(path_of("L__self___layers_0") == std::nullopt);                  // layers_0? layers.0?
    CHECK(path_of("L__self___a_b", {"a.b", "a_b"}) == std::nullopt);       // two can be it
    CHECK(path_of("L__self___features_2", {"features"}) == std::nullopt);  // no tensor names it
  }
}

TEST_CASE("a .pt2's nn_module_stack names its modules and their types, never invented ones") {
  const std::string nested = state_dict(true);
  SUBCASE("torch 2.6's Sequential root: L['fn'] is the root") {
    const ModelMetadata model =
        described(program({"L__self__,,torch.nn.modules.container.Sequential;fn,L['fn'],"
                           "torch.nn.modules.container.Sequential;fn_0,getattr(L['fn'], 'fc'),"
                           "torch.nn.modules.linear.Linear;fn_0_1,getattr(getattr(L['fn'], "
                           "'fc'), 'act'),torch.nn.modules.activation.ReLU"}),
                  nested);
    CHECK(paths_of(model) == std::vector<std::string>{"<root>", "fc", "fc.act"});
    CHECK(model.modules()[1].module_type() == "torch.nn.modules.linear.Linear");
    CHECK(model.modules()[2].module_type() == "torch.nn.modules.activation.ReLU");
  }
  SUBCASE("raw dynamo sources and torch 2.1's key:(path,type)") {
    const ModelMetadata model = described(
        program({"L__self__:(L['self'],__main__.Net);L__self___fc:(L['self'].fc,"
                 "torch.nn.modules.linear.Linear)",
                 kRoot + ";L__self___relu,L['self']._modules['relu'],torch.nn.ReLU",
                 kRoot + ";g,G['helper'],torch.nn.Tanh;g_0,G['helper'][0],torch.nn.Tanh"}),
        nested);
    CHECK(paths_of(model) == std::vector<std::string>{"<root>", "fc", "relu"});
    CHECK(model.modules()[0].module_type() == "__main__.Net");
    CHECK(model.modules()[2].module_type() == "torch.nn.ReLU");
  }
  SUBCASE("an entry that does not split is refused naming the file, the node and the entry") {
    CHECK_THROWS_WITH_AS(described(program({kRoot + kFc, kRoot + ";fc_only"}), nested),
                         "net.pt2: a torch.export archive that cannot be read: "
                         "serialized_exported_program.json: node 1 (torch.ops.aten.linear."
                         "default): the nn_module_stack entry 'fc_only' does not split into "
                         "key, path and type",
                         Error);
  }
}

TEST_CASE("two names of one storage with different sizes are refused naming both") {
  // fc.bias and fc.alias name storage 1: 3 elements, then 6 (which the record holds too)
  CHECK_THROWS_WITH_AS(described(program({kRoot + kFc}), state_dict(true, 6)),
                       "net.pt2: a torch.export archive that cannot be read: "
                       "serialized_state_dict.pt: the tensors fc.bias and fc.alias name one "
                       "storage, archive/data/1, with different sizes (3 float32 and 6 float32 "
                       "elements)",
                       Error);
  // described alike: one storage, tied
  const ModelMetadata tied = described(program({kRoot + kFc}), state_dict(true, 3));
  CHECK(tied.total_parameters() == 15);
}
