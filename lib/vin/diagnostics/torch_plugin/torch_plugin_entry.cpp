// The plugin's entry point (libvin_torch_plugin.so): vin_torch behind the TorchPlugin table.
#include <c10/util/Exception.h>
#include <torch/csrc/jit/runtime/print_handler.h>
#include <torch/version.h>

#include "vin/diagnostics/capture/capture_archive.h"
#include "vin/diagnostics/compare/compare_sides.h"
#include "vin/diagnostics/plugin/torch_plugin.h"
#include "vin/diagnostics/profiling/profile_archive.h"
#include "vin/diagnostics/plugin/log_sink.h"
#include "vin/diagnostics/torch/inspect_model.h"

namespace {

// LibTorch's warnings (TORCH_WARN, a model's warnings.warn) go to glog on stderr by default,
// with a "Logging before InitGoogleLogging()" banner; here they become info lines of the log.
// (LibTorch 2 passes a c10::Warning and moved the setter to c10::WarningUtils.)
class WarningsToLog : public c10::WarningHandler {
 public:
#if TORCH_VERSION_MAJOR >= 2
  void process(const c10::Warning& warning) override { log(warning.msg()); }
#else
  void process(const c10::SourceLocation&, const std::string& msg, bool) override { log(msg); }
#endif

 private:
  static void log(const std::string& message) {
    vin::diagnostics::log_line(vin::diagnostics::LogLevel::info, "LibTorch: " + message);
  }
};

// TorchScript's print() writes to stdout by default, among the records; it goes to the log's
// stream instead, as the model printed it.
void print_to_log(const std::string& text) {
  vin::diagnostics::log_line(vin::diagnostics::LogLevel::model_output, text);
}

void install_log_sink(vin::diagnostics::LogSink sink) {
  static WarningsToLog handler;
  vin::diagnostics::set_log_sink(sink);
#if TORCH_VERSION_MAJOR >= 2
  c10::WarningUtils::set_warning_handler(&handler);
#else
  c10::Warning::set_warning_handler(&handler);
#endif
  torch::jit::setPrintHandler(sink ? &print_to_log : torch::jit::getDefaultPrintHandler());
}

}  // namespace

extern "C" __attribute__((visibility("default"))) const vin::diagnostics::TorchPlugin*
vin_torch_plugin_v1() {
  // filled by name: a field added to TorchPlugin cannot shift the others
  static const vin::diagnostics::TorchPlugin plugin = [] {
    namespace vd = vin::diagnostics;
    vd::TorchPlugin table{};
    table.abi_version = vd::kTorchPluginAbi;
    table.libtorch_version = TORCH_VERSION;
    table.describe_with_libtorch =
        static_cast<vd::ModelMetadata (*)(const vd::ArchiveLayout&, const vd::InspectDetails&)>(
            &vd::describe_with_libtorch);
    table.capture_archive = &vd::capture_archive;
    table.compare_sides = &vd::compare_sides;
    table.profile_archive = &vd::profile_archive;
    table.set_log_sink = &install_log_sink;
    return table;
  }();
  return &plugin;
}
