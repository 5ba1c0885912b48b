#include <torch/script.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "fixtures.h"
#include "vin/diagnostics/output/npz_writer.h"
#include "vin/diagnostics/records/error.h"
#include "vin/diagnostics/run/forward_inputs.h"
#include "vin/diagnostics/run/random_start.h"
#include "vin/diagnostics/torch/model_loader.h"

#include "doctest_after_torch.h"  // last: after glog's CHECK macros

using namespace vin::diagnostics;

namespace {

const c10::Device kCpu(c10::kCPU);

torch::jit::Module model_taking(const std::string& signature) {
  torch::jit::Module m("__torch__.test.Takes");
  m.define("def forward(self, " + signature + "):\n  return 0\n");
  return m;
}

std::string input_error(const std::string& file, const torch::jit::Module& model) {
  try {
    read_forward_inputs(fixture("inputs/" + file), model, kCpu);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

const c10::IValue& kwarg(const ForwardInputs& in, const std::string& name) {
  for (const auto& [n, v] : in.kwargs)
    if (n == name) return v;
  throw std::runtime_error("no kwarg " + name);
}

// forward(x: Tensor, steps: int, scale: float = 0.5), made by hand as a runner that is not a
// TorchScript module (an exported program's) makes it
ForwardSchema hand_made_schema() {
  ForwardSchema schema;
  schema.methods.push_back(
      {"forward",
       {c10::Argument("x", c10::TensorType::get()), c10::Argument("steps", c10::IntType::get()),
        c10::Argument("scale", c10::FloatType::get(), c10::nullopt, c10::IValue(0.5))}});
  schema.description = "forward(x: Tensor, steps: int, scale: float = 0.5)";
  return schema;
}

// An .npz of a float32 2x3 `arr_0` and, where asked, a 0-d int64 `steps`, written by the
// project's writer into the temporary directory
std::string write_npz(const std::string& name, bool with_steps) {
  const std::string path = (std::filesystem::temp_directory_path() / name).string();
  const float x[] = {0.0f, 1.0f, 2.0f, 3.0f, 4.0f, 5.0f};
  const std::int64_t steps = 7;
  NpzWriter writer(path);
  writer.add("arr_0", NpyView{"<f4", {2, 3}, x, sizeof x});
  if (with_steps) writer.add("steps", NpyView{"<i8", {}, &steps, sizeof steps});
  writer.finish();
  return path;
}

}  // namespace

TEST_CASE("every numpy dtype, both byte orders, stored and deflated") {
  std::string signature;
  for (const char* kind : {"f2", "f4", "f8", "i1", "i2", "i4", "i8", "u1", "c8", "c16"})
    signature += std::string(signature.empty() ? "" : ", ") + "le_" + kind + ": Tensor";
  signature += ", na_b1: Tensor";
  for (const char* kind : {"f2", "f4", "f8", "i2", "i4", "i8", "c8", "c16"})
    signature += std::string(", be_") + kind + ": Tensor";
  const auto model = model_taking(signature);
  for (const char* file : {"dtypes.npz", "dtypes_compressed.npz"}) {
    CAPTURE(file);
    const ForwardInputs in =
        read_forward_inputs(fixture(std::string("inputs/") + file), model, kCpu);
    CHECK(in.args.empty());
    REQUIRE(in.kwargs.size() == 19);
    const at::Tensor expected = at::arange(6, at::kDouble).reshape({2, 3});
    for (const auto& [name, value] : in.kwargs) {
      CAPTURE(name);
      const at::Tensor t = value.toTensor();
      CHECK(t.sizes() == expected.sizes());
      if (t.is_complex())
        CHECK(at::real(t).to(at::kDouble).equal(expected));
      else if (t.scalar_type() == at::kBool)
        CHECK(t.equal(expected.to(at::kBool)));
      else
        CHECK(t.to(at::kDouble).equal(expected));
    }
    CHECK((kwarg(in, "le_f2").toTensor().scalar_type() == at::kHalf));
    CHECK((kwarg(in, "be_i8").toTensor().scalar_type() == at::kLong));
    CHECK((kwarg(in, "le_u1").toTensor().scalar_type() == at::kByte));
    CHECK((kwarg(in, "be_c16").toTensor().scalar_type() == at::kComplexDouble));
    CHECK(in.kwargs.front().first == "le_f2");  // schema order
  }
}

TEST_CASE("Fortran order, 0-d arrays as scalars, empty arrays, exact int64, non-finite floats") {
  const auto model = model_taking(
      "fortran: Tensor, scalar: float, empty: Tensor, int64_extremes: Tensor, nonfinite: Tensor");
  const ForwardInputs in = read_forward_inputs(fixture("inputs/layouts.npz"), model, kCpu);
  CHECK(kwarg(in, "fortran").toTensor().equal(at::arange(24, at::kFloat).reshape({2, 3, 4})));
  CHECK(kwarg(in, "scalar").isDouble());
  CHECK(kwarg(in, "scalar").toDouble() == 2.5);
  CHECK(kwarg(in, "empty").toTensor().sizes() == std::vector<std::int64_t>{0, 3});
  const at::Tensor extremes = kwarg(in, "int64_extremes").toTensor();
  CHECK(extremes[0].item<std::int64_t>() == std::numeric_limits<std::int64_t>::min());
  CHECK(extremes[1].item<std::int64_t>() == std::numeric_limits<std::int64_t>::max());
  CHECK(extremes[2].item<std::int64_t>() == (std::int64_t{1} << 53) + 1);
  const at::Tensor nf = kwarg(in, "nonfinite").toTensor();
  CHECK(std::isnan(nf[0].item<float>()));
  CHECK(std::isinf(nf[1].item<float>()));
  // a 0-d array where a tensor is declared stays a tensor
  const auto tensor_model = model_taking(
      "fortran: Tensor, scalar: Tensor, empty: Tensor, int64_extremes: Tensor, nonfinite: Tensor");
  const ForwardInputs t = read_forward_inputs(fixture("inputs/layouts.npz"), tensor_model, kCpu);
  CHECK(kwarg(t, "scalar").isTensor());
  CHECK(kwarg(t, "scalar").toTensor().dim() == 0);
}

TEST_CASE("positional and keyword binding, and each way a torch.save file gives arguments") {
  const auto model = load_torchscript_archive(fixture("everything.pt"));
  for (const char* file :
       {"everything_positional.npz", "everything_tuple.pt", "everything_list.pt"}) {
    CAPTURE(file);
    const ForwardInputs in =
        read_forward_inputs(fixture(std::string("inputs/") + file), model, kCpu);
    CHECK(in.args.size() == 2);
    CHECK(in.kwargs.empty());
    CHECK((in.args[1].toTensor().scalar_type() == at::kLong));
  }
  for (const char* file : {"everything_keyword.npz"}) {
    const ForwardInputs in =
        read_forward_inputs(fixture(std::string("inputs/") + file), model, kCpu);
    CHECK(in.args.size() == 1);
    REQUIRE(in.kwargs.size() == 1);
    CHECK(in.kwargs[0].first == "tokens");
  }
  for (const char* file :
       {"everything_dict.pt", "everything_ordered.pt", "everything_parameter.pt",
        "everything_state_dict.pt", "everything_state_dict_legacy.pt",
        "everything_state_dict_tar.pt"}) {
    CAPTURE(file);
    const ForwardInputs dict =
        read_forward_inputs(fixture(std::string("inputs/") + file), model, kCpu);
    CHECK(dict.args.empty());
    REQUIRE(dict.kwargs.size() == 2);
    CHECK(dict.kwargs[0].first == "x");  // schema order
    CHECK(dict.kwargs[0].second.toTensor().equal(
        read_forward_inputs(fixture("inputs/everything_positional.npz"), model, kCpu)
            .args[0]
            .toTensor()));
  }
  const ForwardInputs single =
      read_forward_inputs(fixture("inputs/single.npy"), model_taking("v: Tensor"), kCpu);
  CHECK(single.args.size() == 1);
  CHECK(single.args[0].toTensor().equal(at::arange(4, at::kFloat)));
}

TEST_CASE("inputs that do not fit forward print its schema") {
  const auto model = load_torchscript_archive(fixture("everything.pt"));
  const std::string schema = "; the model takes forward(x: Tensor, tokens: Tensor)";
  CHECK(input_error("everything_missing.npz", model) ==
        fixture("inputs/everything_missing.npz") + ": argument 'tokens' is missing" + schema);
  CHECK(input_error("everything_unknown_name.npz", model) ==
        fixture("inputs/everything_unknown_name.npz") + ": forward has no argument 'colour'" +
            schema);
  CHECK(input_error("everything_gap.npz", model).find("has arr_2 but no arr_1") !=
        std::string::npos);
  CHECK(input_error("single_tensor.pt", model).find("argument 'tokens' is missing") !=
        std::string::npos);
  const std::string layouts =
      "fortran: int, scalar: Tensor, empty: Tensor, int64_extremes: Tensor, nonfinite: Tensor";
  CHECK(input_error("layouts.npz", model_taking(layouts)).find("argument 'fortran' must be int") !=
        std::string::npos);
  // names are checked before any member is read: the first one forward lacks is named
  CHECK(input_error("layouts.npz", model_taking("fortran: Tensor"))
            .find("forward has no argument 'scalar'") != std::string::npos);
  CHECK(input_error("everything_positional.npz", model_taking("x: Tensor")) ==
        fixture("inputs/everything_positional.npz") +
            ": 2 positional arguments given, 1 accepted; the model takes forward(x: Tensor)");
}

TEST_CASE("bytes that are not a zip never reach LibTorch's zip reader (torch_save_fuzzer)") {
  const auto model = model_taking("x: Tensor");
  const auto dir = std::filesystem::temp_directory_path();
  const auto write = [&](const std::string& name, const std::string& bytes) {
    const std::string path = (dir / name).string();
    std::ofstream(path, std::ios::binary) << bytes;
    return path;
  };
  const auto error = [&](const std::string& path) {
    try {
      read_forward_inputs(path, model, kCpu);
    } catch (const Error& e) {
      std::filesystem::remove(path);
      return std::string(e.what());
    }
    return std::string();
  };
  // a pickle that is not a torch.save file, and the legacy format's magic number alone
  const std::string pickle = write("vin_pickle_inputs.pt", std::string("\x80\x02K\x01.", 5));
  CHECK(error(pickle) ==
        pickle + ": a pickle, not an inputs file (.npz, .npy or torch.save data)");
  const std::string legacy = write(
      "vin_legacy_inputs.pt", std::string("\x80\x02\x8a\x0a\x6c\xfc\x9c\x46\xf9\x20\x6a\xa8\x50\x19.", 15));
  CHECK(error(legacy) == legacy +
                             ": not a readable legacy torch.save file: its protocol version at "
                             "byte 15: missing (the file ends there)");
  // a zip64 locator after a prefix: LibTorch's in-memory reader followed its offset out of bounds
  const std::string prefixed =
      write("vin_prefixed_inputs.pt", "junk PK\x06\x07" + std::string(16, '\xff'));
  CHECK(error(prefixed) ==
        prefixed + ": a text file, not an inputs file (.npz, .npy or torch.save data)");
}

TEST_CASE("unreadable inputs files") {
  const auto model = model_taking("x: Tensor");
  CHECK(input_error("sparse.pt", model).find("holds sparse tensors") != std::string::npos);
  CHECK(input_error("module_pickle.pt", model)
            .find("holds a pickled torch.nn.modules.linear.Linear object") != std::string::npos);
  CHECK(input_error("missing.npz", model) == fixture("inputs/missing.npz") + ": no such file");
  CHECK(input_error("object.npz", model).find("object arrays") != std::string::npos);
  CHECK(input_error("shape_mismatch.npz", model).find("shorter than the header's shape needs") !=
        std::string::npos);
  CHECK(input_error("too_long.npz", model).find("longer than the header's shape needs") !=
        std::string::npos);
  CHECK(input_error("bad_magic.npz", model).find("no \\x93NUMPY magic") != std::string::npos);
  CHECK(input_error("strings.npz", model).find("unsupported dtype '<U1'") != std::string::npos);
  CHECK(input_error("structured.npz", model).find("structured (record) dtypes") !=
        std::string::npos);
}

TEST_CASE("a hand-made ForwardSchema binds as a TorchScript module's forward does") {
  const ForwardSchema schema = hand_made_schema();
  // the module's schema of the same forward is the same facts
  const ForwardSchema scripted =
      forward_schema(model_taking("x: Tensor, steps: int, scale: float = 0.5"));
  CHECK(scripted.description == schema.description);
  REQUIRE(scripted.methods.size() == 1);
  CHECK(scripted.methods[0].name == "forward");
  REQUIRE(scripted.methods[0].parameters.size() == 3);
  for (std::size_t i = 0; i < 3; ++i)
    CHECK(scripted.methods[0].parameters[i] == schema.methods[0].parameters[i]);

  // an .npz: arr_0 positional, the 0-d int64 array `steps` an int, `scale` left to its default
  const std::string good = write_npz("vin_forward_schema_inputs.npz", true);
  const ForwardInputs in = read_forward_inputs(good, schema, kCpu, /*digest=*/true);
  std::filesystem::remove(good);
  CHECK(in.method == "forward");
  REQUIRE(in.args.size() == 1);
  CHECK(in.args[0].toTensor().equal(at::arange(6, at::kFloat).reshape({2, 3})));
  REQUIRE(in.kwargs.size() == 1);
  CHECK(in.kwargs[0].first == "steps");
  REQUIRE(in.kwargs[0].second.isInt());
  CHECK(in.kwargs[0].second.toInt() == 7);
  CHECK(in.sha256.has_value());

  // a missing argument: the file named, the schema's description printed
  const std::string missing = write_npz("vin_forward_schema_missing.npz", false);
  std::string message;
  try {
    read_forward_inputs(missing, schema, kCpu);
  } catch (const Error& e) {
    message = e.what();
  }
  std::filesystem::remove(missing);
  CHECK(message == missing +
                       ": argument 'steps' is missing; the model takes forward(x: Tensor, "
                       "steps: int, scale: float = 0.5)");
}

TEST_CASE("--shape specs bind to a hand-made ForwardSchema in its order") {
  const ForwardSchema schema = hand_made_schema();
  ShapedInputs shaped;
  shaped.int_high = 5;
  // given steps first: drawn in forward's order, x then steps, as Python draws them
  shaped.shapes = {parse_shape_spec("steps=:int64"), parse_shape_spec("x=2x3")};
  RandomStart start(42);
  const ForwardInputs in = make_shaped_inputs(shaped, start.generator(), schema, kCpu);
  RandomStart expected(42);
  const at::Tensor x = at::randn({2, 3}, expected.generator());
  const std::int64_t steps = at::randint(0, 5, {}, expected.generator()).item<std::int64_t>();
  CHECK(in.args.empty());
  REQUIRE(in.kwargs.size() == 2);
  CHECK(in.kwargs[0].first == "x");
  CHECK(in.kwargs[0].second.toTensor().equal(x));
  CHECK(in.kwargs[1].first == "steps");
  REQUIRE(in.kwargs[1].second.isInt());  // a 0-d int64 tensor where forward declares int
  CHECK(in.kwargs[1].second.toInt() == steps);

  // the command line's fault: UsageError, with the schema printed
  shaped.shapes = {parse_shape_spec("x=2x3")};
  CHECK_THROWS_WITH_AS(make_shaped_inputs(shaped, start.generator(), schema, kCpu),
                       "--shape: argument 'steps' is missing; the model takes forward(x: Tensor, "
                       "steps: int, scale: float = 0.5)",
                       UsageError);
}

TEST_CASE("a ForwardSchema's overloads: the first the inputs fit; none: no forward") {
  ForwardSchema schema;
  schema.methods.push_back({"forward__0", {c10::Argument("x", c10::TensorType::get())}});
  schema.methods.push_back({"forward__1",
                            {c10::Argument("x", c10::TensorType::get()),
                             c10::Argument("steps", c10::IntType::get())}});
  schema.description = "forward__0(x: Tensor) or forward__1(x: Tensor, steps: int)";
  const std::string path = write_npz("vin_forward_schema_overloads.npz", true);
  CHECK(read_forward_inputs(path, schema, kCpu).method == "forward__1");
  CHECK_THROWS_WITH_AS(read_forward_inputs(path, ForwardSchema{}, kCpu),
                       "the model has no forward method", Error);
  std::filesystem::remove(path);
}
