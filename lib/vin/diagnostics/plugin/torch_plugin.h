// The LibTorch half of vin-inspect as a plugin: the binary links no LibTorch, so
// --help, --version, inspect-model, inspect-config and diff start in milliseconds, and loads
// libvin_torch_plugin.so (built from vin_torch, installed beside it) only for what needs LibTorch:
// capture, compare, profile, and inspect-model on an archive the structure reader does not
// understand. C++ users of the library link vin_torch directly and never see this.
#pragma once

#include <string>
#include <vector>

#include "vin/diagnostics/torchscript/archive_layout.h"
#include "vin/diagnostics/capture/capture_request.h"
#include "vin/diagnostics/compare/compare_request.h"
#include "vin/diagnostics/profiling/profile_request.h"
#include "vin/diagnostics/plugin/log_sink.h"
#include "vin/diagnostics/records/model_metadata.h"

namespace vin::diagnostics {

/// What the plugin offers: the vin_torch functions of the same names. Exceptions (Error,
/// UsageError) cross the boundary as they are: binary and plugin come from one build.
struct TorchPlugin {
  int abi_version;               ///< kTorchPluginAbi of the build that made the plugin
  const char* libtorch_version;  ///< the LibTorch the plugin was built against
  ModelMetadata (*describe_with_libtorch)(const ArchiveLayout& archive,
                                          const InspectDetails& details);
  CaptureResult (*capture_archive)(const CaptureRequest& request);
  CompareResult (*compare_sides)(const CompareRequest& request);
  ProfileResult (*profile_archive)(const ProfileRequest& request);
  /// Sends the plugin's log lines, LibTorch's warnings among them, to `sink`.
  void (*set_log_sink)(LogSink sink);
};

// 14: ForwardRun::device_option; 13: FlopCount in the profile records, ProfileSummary::measured
inline constexpr int kTorchPluginAbi = 14;
/// The plugin's one exported symbol: `extern "C" const TorchPlugin* vin_torch_plugin_v1()`.
inline constexpr const char* kTorchPluginEntry = "vin_torch_plugin_v1";
inline constexpr const char* kTorchPluginFile = "libvin_torch_plugin.so";

/// Loads the plugin from the first of `candidates` (paths to the plugin file) that exists, once
/// per process, and returns its table. Throws Error naming the files tried, or dlopen's reason,
/// when none loads or its ABI version differs.
const TorchPlugin& load_torch_plugin(const std::vector<std::string>& candidates);

}  // namespace vin::diagnostics
