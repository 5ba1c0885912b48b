#include "vin/diagnostics/capture_archive.h"

#include <torch/csrc/jit/runtime/graph_executor.h>

#include <torch/csrc/autograd/grad_mode.h>

#include "vin/diagnostics/error.h"
#include "vin/diagnostics/forward_inputs.h"
#include "vin/diagnostics/model_capture.h"
#include "vin/diagnostics/model_loader.h"

namespace vin::diagnostics {

CaptureResult capture_archive(const CaptureRequest& request) {
  const c10::Device device = resolve_device(request.device);
  torch::jit::Module model = load_torchscript_archive(request.archive, request.device);
  if (request.eval) model.eval();
  // read every inputs file before running anything: a bad file fails fast
  std::vector<ForwardInputs> inputs;
  for (const auto& path : request.inputs)
    inputs.push_back(read_forward_inputs(path, model, device));

  at::NoGradGuard no_grad;
  // One forward per file: TorchScript's profiling executor would spend most of the first call
  // profiling and optimising the graph (seconds on deep or wide models) for calls that never
  // come. The records are the same either way; the executor's setting is restored on return.
  torch::jit::GraphOptimizerEnabledGuard no_graph_optimisation(false);
  ModelCapture capture = capture_model(model, request.module_paths, request.limits);
  capture.enable_stats(request.stats);
  CaptureResult result;
  {
    auto scope = capture.enter();
    for (std::size_t i = 0; i < inputs.size(); ++i) {
      try {
        capture.forward(inputs[i]);
      } catch (const std::exception& e) {
        result.error = request.archive + ": the model's forward raised on " + request.inputs[i] +
                       ": " + describe_torch_error(e);
        break;
      }
    }
  }
  result.snapshots = capture.snapshots();
  result.summary = capture.summary();
  return result;
}

}  // namespace vin::diagnostics
