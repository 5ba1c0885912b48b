// The .pt2 reader on archives written here byte by byte (a program's JSON, a nested torch.save
// whose pickle is written opcode by opcode) in the spellings torch 2.1-2.14 use: requires_grad
// as torch 2.2 saved it.
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

#include "vin/diagnostics/archive/export_archive.h"
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
