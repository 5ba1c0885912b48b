// The .pt2 interpreter (contract 12.1) on the archives torch 2.6 and 2.14 wrote
// (tests/fixtures/pt2): each program's output against its TorchScript twin's (the same model
// instance, scripted: NAME.pt) under this LibTorch, and what the plan refuses before running:
// an operator LibTorch lacks, a value no node defines, an input outside the exported ranges.
#include <torch/csrc/jit/serialization/import.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <regex>
#include <string>
#include <vector>
#include <zip.h>

#include "doctest_after_torch.h"
#include "vin/diagnostics/container/zip_archive.h"
#include "vin/diagnostics/export/export_program.h"
#include "vin/diagnostics/export_run/program_runner.h"
#include "vin/diagnostics/export_run/python_operators.h"
#include "vin/diagnostics/records/error.h"
#include "vin/diagnostics/torch/dtype_names.h"

using namespace vin::diagnostics;
using namespace vin::diagnostics::export_run;

namespace {

std::string pt2_fixture(const std::string& version, const std::string& name) {
  return std::string(VIN_SOURCE_DIR) + "/tests/fixtures/pt2/" + version + "/" + name;
}

ZipArchive open_zip(const std::string& path) { return ZipArchive(InputFile::open(path)); }

// inputs for each argument: seeded normal tensors of the exported sizes (a symbolic one: 3)
std::vector<c10::IValue> example_inputs(const ProgramRunner& runner) {
  torch::manual_seed(0);
  std::vector<c10::IValue> out;
  for (const ProgramArgumentSlot& a : runner.arguments()) {
    if (!a.tensor) {
      out.emplace_back(a.constant ? c10::IValue() : c10::IValue(std::int64_t{2}));
      continue;
    }
    std::vector<std::int64_t> sizes;
    for (const auto& s : a.meta->sizes) sizes.push_back(s.value.value_or(3));
    const auto type = scalar_type_of(*a.meta->dtype).value();
    out.emplace_back(c10::isIntegralType(type, false)
                         ? torch::randint(0, 10, sizes, torch::TensorOptions().dtype(type))
                         : torch::randn(sizes, torch::TensorOptions().dtype(type)));
  }
  return out;
}

// The archive `path` with `from` replaced by `to` in its program's JSON, written beside the
// test's temporary files; its path.
std::string edited_copy(const std::string& path, const std::string& from, const std::string& to) {
  const std::string out =
      (std::filesystem::temp_directory_path() / ("vin_program_runner_test_" +
                                                 std::to_string(std::hash<std::string>()(to)) +
                                                 ".pt2"))
          .string();
  const ZipArchive source = open_zip(path);
  int code = 0;
  zip_t* z = zip_open(out.c_str(), ZIP_CREATE | ZIP_TRUNCATE, &code);
  REQUIRE(z != nullptr);
  std::vector<std::string> kept;  // libzip reads the buffers when the zip is closed
  kept.reserve(source.entries().size());
  for (std::size_t i = 0; i < source.entries().size(); ++i) {
    const std::string& name = source.entries()[i].name;
    std::string bytes = source.read(i, source.entries()[i].size, name);
    if (name.size() > 5 && name.compare(name.size() - 5, 5, ".json") == 0 &&
        name.find("models/") != std::string::npos)
      bytes = std::regex_replace(bytes, std::regex(from), to);
    kept.push_back(std::move(bytes));
    zip_source_t* s = zip_source_buffer(z, kept.back().data(), kept.back().size(), 0);
    REQUIRE(s != nullptr);
    REQUIRE(zip_file_add(z, name.c_str(), s, 0) >= 0);
  }
  REQUIRE(zip_close(z) == 0);
  return out;
}

std::string error_of(const std::string& path) {
  try {
    const ZipArchive zip = open_zip(path);
    ProgramRunner runner(zip, read_export_program(zip), c10::Device("cpu"));
    runner.run(example_inputs(runner));
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("an exported program computes what its scripted twin computes") {
  for (const char* version : {"torch-2.6", "torch-2.14"})
    for (const char* name : {"cnn_eval", "linear", "tied", "twice_unused"}) {
      const std::string which = std::string(version) + "/" + name;
      CAPTURE(which);
      const ZipArchive zip = open_zip(pt2_fixture(version, std::string(name) + ".pt2"));
      ProgramRunner runner(zip, read_export_program(zip), c10::Device("cpu"));
      const std::vector<c10::IValue> inputs = example_inputs(runner);
      const std::vector<c10::IValue> outputs = runner.run(inputs);
      torch::jit::Module twin = torch::jit::load(pt2_fixture(version, std::string(name) + ".pt"));
      twin.eval();
      torch::NoGradGuard no_grad;
      const c10::IValue expected = twin.forward(inputs);
      REQUIRE(outputs.size() == 1);
      REQUIRE(expected.isTensor());
      CHECK((outputs[0].toTensor().sizes() == expected.toTensor().sizes()));
      CHECK(torch::allclose(outputs[0].toTensor(), expected.toTensor(), 1e-5, 1e-6));
      // run again: the same result (the plan and the weights are reused)
      CHECK(torch::equal(runner.run(inputs)[0].toTensor(), outputs[0].toTensor()));
    }
}

TEST_CASE("a symbolic integer input reaches a Tensor argument as a Python number") {
  const ZipArchive zip = open_zip(pt2_fixture("torch-2.14", "symint.pt2"));
  ProgramRunner runner(zip, read_export_program(zip), c10::Device("cpu"));
  REQUIRE(runner.arguments().size() == 2);
  CHECK(runner.arguments()[1].name == "steps");
  torch::manual_seed(0);
  const at::Tensor x = torch::randn({2, 4});
  const auto twice = runner.run({x, c10::IValue(std::int64_t{2})})[0].toTensor();
  const auto thrice = runner.run({x, c10::IValue(std::int64_t{3})})[0].toTensor();
  CHECK((twice.scalar_type() == at::kFloat));  // a wrapped number does not promote
  CHECK(torch::allclose(twice * 3, thrice * 2));
}

TEST_CASE("inputs outside the exported sizes and ranges are refused naming the dimension") {
  const ZipArchive zip = open_zip(pt2_fixture("torch-2.14", "dynamic.pt2"));
  ProgramRunner runner(zip, read_export_program(zip), c10::Device("cpu"));
  CHECK(runner.run({torch::randn({5, 4})})[0].toTensor().size(0) == 5);
  try {
    runner.run({torch::randn({65, 4})});
    FAIL("a batch of 65 ran");
  } catch (const Error& e) {
    CHECK(std::string(e.what()).find("the argument x's dimension 0 is 65, outside s77's range "
                                     "[1, 64]") != std::string::npos);
  }
  try {
    runner.run({torch::randn({2, 5})});
    FAIL("4 features became 5");
  } catch (const Error& e) {
    CHECK(std::string(e.what()).find("dimension 1 is 5 where the program was exported for 4") !=
          std::string::npos);
  }
}

TEST_CASE("what the plan cannot run is refused before anything runs, naming the node") {
  const std::string linear = pt2_fixture("torch-2.14", "linear.pt2");
  const std::string missing =
      error_of(edited_copy(linear, "torch\\.ops\\.aten\\.linear\\.default",
                           "torch.ops.aten.no_such_op.default"));
  CHECK(missing.find("the node linear (torch.ops.aten.no_such_op.default): LibTorch ") !=
        std::string::npos);
  CHECK(missing.find("has no operator aten::no_such_op") != std::string::npos);
  const std::string undefined =
      error_of(edited_copy(linear, "\"name\": \"p_fc_bias\"\\}\\}, \"kind\"",
                           "\"name\": \"nowhere\"}}, \"kind\""));
  CHECK(undefined.find("uses the value nowhere, which nothing before it defines") !=
        std::string::npos);
  const std::string unknown_argument =
      error_of(edited_copy(linear, "\"name\": \"bias\"", "\"name\": \"biases\""));
  CHECK(unknown_argument.find("gives the argument biases, which its operator does not take") !=
        std::string::npos);
  const std::string hop = error_of(edited_copy(linear, "torch\\.ops\\.aten\\.linear\\.default",
                                               "torch.ops.higher_order.invoke_subgraph"));
  CHECK(hop.find("the higher-order operator invoke_subgraph, which this runner does not run") !=
        std::string::npos);
}

TEST_CASE("Python's operators on symbolic numbers floor as Python does") {
  using V = std::vector<c10::IValue>;
  const auto i = [](std::int64_t n) { return c10::IValue(n); };
  CHECK(apply_python_operator("_operator.floordiv", V{i(-7), i(2)}).toInt() == -4);
  CHECK(apply_python_operator("_operator.mod", V{i(-7), i(2)}).toInt() == 1);
  CHECK(apply_python_operator("_operator.mod", V{i(7), i(-2)}).toInt() == -1);
  CHECK(apply_python_operator("_operator.truediv", V{i(7), i(2)}).toDouble() == 3.5);
  CHECK(apply_python_operator("_operator.mul", V{i(3), c10::IValue(0.5)}).toDouble() == 1.5);
  CHECK(apply_python_operator("_operator.pow", V{i(2), i(10)}).toInt() == 1024);
  CHECK(apply_python_operator("_operator.lt", V{i(2), i(3)}).toBool());
  CHECK(apply_python_operator("torch.sym_max", V{i(2), i(3)}).toInt() == 3);
  CHECK(apply_python_operator("math.ceil", V{c10::IValue(2.5)}).toInt() == 3);
  CHECK_THROWS_AS(apply_python_operator("_operator.floordiv", V{i(1), i(0)}), Error);
}
