// The plugin's entry point (libvin_torch_plugin.so): vin_torch behind the TorchPlugin table.
#include "vin/diagnostics/capture_archive.h"
#include "vin/diagnostics/inspect_model.h"
#include "vin/diagnostics/torch_plugin.h"

#include <torch/version.h>

extern "C" __attribute__((visibility("default"))) const vin::diagnostics::TorchPlugin*
vin_torch_plugin_v1() {
  static const vin::diagnostics::TorchPlugin plugin{
      vin::diagnostics::kTorchPluginAbi,
      TORCH_VERSION,
      &vin::diagnostics::inspect_model_archive,
      &vin::diagnostics::capture_archive,
  };
  return &plugin;
}
