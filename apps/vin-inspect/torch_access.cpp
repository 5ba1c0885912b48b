#include "torch_access.h"

#include <spdlog/spdlog.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "progress_line.h"
#include "vin/diagnostics/torchscript/archive_layout.h"
#include "vin/diagnostics/formats/file_kind.h"
#include "vin/diagnostics/plugin/operator_libraries.h"
#include "vin/diagnostics/records/error.h"

namespace vd = vin::diagnostics;
namespace fs = std::filesystem;

namespace vin::cli {
namespace {

// The library's log lines (and, through the plugin, LibTorch's warnings) in this program's log,
// on a line of their own (a progress line on the terminal is taken away first).
void log_to_spdlog(vd::LogLevel level, const std::string& message) {
  clear_progress_line();
  switch (level) {
    case vd::LogLevel::debug:
      spdlog::debug("{}", message);
      break;
    case vd::LogLevel::info:
      spdlog::info("{}", message);
      break;
    case vd::LogLevel::warn:
      spdlog::warn("{}", message);
      break;
    case vd::LogLevel::model_output:
      spdlog::default_logger()->flush();
      std::fwrite(message.data(), 1, message.size(), stderr);
      std::fflush(stderr);
      break;
  }
}

// each --load-library of the command, in order
std::vector<std::string>& given_libraries() {
  static std::vector<std::string> libraries;
  return libraries;
}

std::vector<std::string> libraries_to_load() {
  std::vector<std::string> libraries;
  if (const char* listed = std::getenv(vd::kOperatorLibrariesVariable))
    libraries = vd::split_library_list(listed);
  libraries.insert(libraries.end(), given_libraries().begin(), given_libraries().end());
  return libraries;
}

}  // namespace

const vd::TorchPlugin& torch_plugin() {
  if (!VIN_WITH_TORCH)
    throw vd::UsageError(
        "this vin-inspect was built without LibTorch: capture, compare and --load-with-libtorch "
        "need it "
        "(build with LibTorch, see docs/building.md)");
  std::vector<std::string> candidates;
  if (const char* forced = std::getenv("VIN_INSPECT_PLUGIN"); forced && *forced)
    candidates.emplace_back(forced);
  std::error_code ec;
  const fs::path exe_dir = fs::read_symlink("/proc/self/exe", ec).parent_path();
  candidates.push_back((exe_dir / vd::kTorchPluginFile).string());
  candidates.push_back((exe_dir / VIN_PLUGIN_RELATIVE_DIR / vd::kTorchPluginFile).string());
  spdlog::debug("loading LibTorch (the plugin)");
  const vd::TorchPlugin& plugin = vd::load_torch_plugin(candidates);
  plugin.set_log_sink(&log_to_spdlog);
  static const bool libraries_loaded = [&plugin] {
    const std::vector<std::string> libraries = libraries_to_load();
    for (const auto& library : libraries) spdlog::debug("loading operator library {}", library);
    vd::load_operator_libraries(libraries, plugin.libtorch_version);
    return true;
  }();
  (void)libraries_loaded;
  return plugin;
}

void name_unrunnable_files(const std::vector<std::string>& paths, bool saved_tensors,
                           bool programs) {
  if (VIN_WITH_TORCH) return;
  for (const std::string& path : paths) {
    // throws for anything but a TorchScript archive (or compare's saved tensors, capture's .pt2)
    const unsigned uses = vd::kRun | (saved_tensors ? vd::kSavedTensors : 0u) |
                          (programs ? vd::kRunProgram : 0u);
    const vd::ClassifiedFile file = vd::open_model_file(path, uses, "a TorchScript archive");
    if (!vd::npz_of(file) && !vd::is_export_program(file)) vd::open_torchscript_archive(file);
  }
}

void add_load_library(CLI::App& sub) {
  sub.add_option("--load-library", given_libraries(),
                 "Load this shared library of custom operators before the archive, as "
                 "torch.ops.load_library does (repeatable; also $VIN_INSPECT_LIBRARIES, "
                 "colon-separated)")
      ->type_name("PATH");
}

std::vector<vd::NamedPath> loaded_libraries() {
  std::vector<vd::NamedPath> out;
  for (const std::string& library : libraries_to_load()) out.push_back({"--load-library", library});
  return out;
}

void add_load_with_libtorch(CLI::App& sub, bool& allowed) {
  sub.add_flag(vd::kLoadWithLibTorchFlag, allowed,
               "Read an archive the built-in reader cannot describe with LibTorch's loader; this "
               "RUNS the archive's TorchScript (__setstate__), so use it only on trusted files");
}

vd::LibTorchInspector libtorch_fallback(bool allowed) {
  if (!allowed) return nullptr;
  return [](const vd::ArchiveLayout& archive, const vd::InspectDetails& details,
            const std::string& why) {
    spdlog::debug("{}: {}; reading it with LibTorch instead ({})", archive.path(), why,
                  vd::kLoadWithLibTorchFlag);
    return torch_plugin().describe_with_libtorch(archive, details);
  };
}

}  // namespace vin::cli
