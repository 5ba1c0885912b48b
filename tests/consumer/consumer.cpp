// A user's program on the installed library: `consumer ARCHIVE` prints the archive's
// inspect-model --all records (vin_core); `consumer ARCHIVE INPUTS` (LibTorch part) runs
// capture_model on one forward and prints its capture records instead. Both must equal the
// vin-inspect binary's output for the same command (run_consumer.py).
#include <iostream>
#include <stdexcept>
#include <string>

#include "vin/diagnostics/formats/model_file.h"
#include "vin/diagnostics/output/output_format.h"
#if CONSUMER_WITH_TORCH
#include "vin/diagnostics/capture/model_capture.h"
#include "vin/diagnostics/run/forward_inputs.h"
#include "vin/diagnostics/torch/model_loader.h"
#endif

namespace vd = vin::diagnostics;

int main(int argc, char** argv) try {
  if (argc == 2) {
    const vd::ModelMetadata model =
        vd::describe_model_file(argv[1], vd::InspectDetails::everything(), nullptr);
    vd::write_model_metadata(std::cout, model, vd::OutputFormat::jsonl);
    return 0;
  }
#if CONSUMER_WITH_TORCH
  if (argc == 3) {
    const torch::jit::Module model = vd::load_torchscript_archive(argv[1]);
    const vd::ForwardInputs inputs = vd::read_forward_inputs(argv[2], model, c10::Device("cpu"));
    vd::ModelCapture capture = vd::capture_model(model);
    {
      const vd::ModelCapture::Scope scope = capture.enter();
      capture.forward(inputs);
    }
    vd::write_capture(std::cout, capture.snapshots(), capture.summary(), vd::OutputFormat::jsonl);
    return 0;
  }
#endif
  std::cerr << "usage: consumer ARCHIVE" << (CONSUMER_WITH_TORCH ? " [INPUTS]" : "") << "\n";
  return 2;
} catch (const std::exception& e) {
  std::cerr << "consumer: " << e.what() << "\n";
  return 1;
}
