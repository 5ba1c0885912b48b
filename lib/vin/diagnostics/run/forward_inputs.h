// Inputs for capture's forward, read from files (docs/inputs.md) and bound to the
// arguments of the model's `forward`.
#pragma once

#include <ATen/core/Generator.h>
#include <torch/csrc/jit/api/module.h>

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "vin/diagnostics/npy/npy_reader.h"
#include "vin/diagnostics/text/shape_spec.h"

namespace vin::diagnostics {

/// Arguments of one root forward call: positional, then keyword arguments in the order given.
struct ForwardInputs {
  std::vector<c10::IValue> args;
  std::vector<std::pair<std::string, c10::IValue>> kwargs;
  std::string method = "forward";  ///< or the overload the inputs fit (`forward__0`)
  /// the inputs file's SHA-256, where read_forward_inputs was asked for it
  std::optional<std::string> sha256{};
};

/// What a forward call may bind to: each method a call may run (`forward`, or an overloaded
/// forward's `forward__0`, `forward__1`, ...) with its parameters (without self), and forward
/// as a user reads it for messages. Inputs bind to it by one set of rules, whoever runs the
/// model (a TorchScript module, an exported program's runner).
struct ForwardSchema {
  struct Method {
    std::string name;
    std::vector<c10::Argument> parameters;
  };
  /// empty for a model without forward: binding to it throws Error saying so
  std::vector<Method> methods;
  std::string description;  ///< "forward(x: Tensor, scale: float = 1.0)" (each overload, " or ")
};

/// A TorchScript module's: `forward`, or, for a root whose forward is overloaded (a scripted
/// nn.LSTM or nn.GRU), its overloads `forward__0`, `forward__1`, ...
ForwardSchema forward_schema(const torch::jit::Module& model);

/// The names of forward_schema(model)'s methods; throws Error when the model has no forward.
std::vector<std::string> forward_methods(const torch::jit::Module& model);

/// forward_schema(model)'s description; throws Error when the model has no forward.
std::string describe_forward(const torch::jit::Module& model);

/// Reads one inputs file and binds it to `schema`'s forward, with tensors placed on `device`.
/// .npz: `arr_0`, `arr_1`, ... are positional, other names keyword; a .npy file is one
/// positional argument; a torch.save file: a tensor is one positional argument, a tuple or list
/// the positional arguments, a dict with string keys the keyword arguments, a dict of exactly
/// `args` and `kwargs` both. A 0-d array where forward declares int, float or bool becomes that
/// scalar. Keyword arguments come back in the order of forward's schema. Throws Error naming
/// the file (and printing the schema when the inputs do not fit it). For an overloaded forward,
/// the first overload the inputs fit is chosen (ForwardInputs::method).
ForwardInputs read_forward_inputs(const std::string& path, const ForwardSchema& schema,
                                  const c10::Device& device, bool digest = false);
/// The same for a TorchScript module's forward (forward_schema(model)).
ForwardInputs read_forward_inputs(const std::string& path, const torch::jit::Module& model,
                                  const c10::Device& device, bool digest = false);

/// A numpy array as a tensor of the same dtype, shape and values (Fortran order made C order).
at::Tensor npy_to_tensor(NpyArray&& array);

/// Inputs made from `--shape` specs, passed as keyword arguments and bound like an .npz file's:
/// made on the CPU in the order of forward's arguments from `generator` (a RandomStart's: seeded
/// with --seed), exactly as Python's `torch.manual_seed(seed)` followed by `torch.randn(shape,
/// dtype=...)` (floating dtypes), `torch.randint(0, int_high, shape, dtype=...)` (integer
/// dtypes) or `torch.randint(0, 2, ...)` (bool) in that order makes them, then placed on `device`.
/// Throws UsageError naming forward's arguments when the specs do not fit them.
ForwardInputs make_shaped_inputs(const ShapedInputs& shaped, at::Generator& generator,
                                 const ForwardSchema& schema, const c10::Device& device);
/// The same for a TorchScript module's forward (forward_schema(model)).
ForwardInputs make_shaped_inputs(const ShapedInputs& shaped, at::Generator& generator,
                                 const torch::jit::Module& model, const c10::Device& device);

}  // namespace vin::diagnostics
