// The binary's way to LibTorch: the plugin (libvin_torch_plugin.so) loaded on first use, the
// custom operator libraries loaded after it (--load-library, $VIN_INSPECT_LIBRARIES), and
// inspect-model's LibTorch fallback (--load-with-libtorch). The binary itself links no LibTorch.
#pragma once

#include <CLI/CLI.hpp>

#include <vector>

#include "vin/diagnostics/formats/model_file.h"
#include "vin/diagnostics/output/output_plan.h"
#include "vin/diagnostics/plugin/torch_plugin.h"

namespace vin::cli {

/// The LibTorch plugin, loaded on first use: $VIN_INSPECT_PLUGIN, else beside this binary (the
/// build tree), else where `cmake --install` puts it relative to this binary; its log lines go
/// to this program's log. The operator libraries are loaded once, after it. Throws UsageError
/// in a build without LibTorch, Error when the plugin or a library cannot be loaded.
const diagnostics::TorchPlugin& torch_plugin();

/// In a build without LibTorch, what capture, compare and profile would refuse before loading
/// anything: each of `paths` (a model to run, or with `saved_tensors` an .npz of compare's) told
/// apart and refused naming what it is (saved records, a broken safetensors file, ...), so that
/// such a file gets the same answer whether or not the build has LibTorch; only a file that
/// could run meets torch_plugin()'s "built without LibTorch". Does nothing where LibTorch is
/// built in: the plugin tells the files apart as it opens them (once). `programs`: a .pt2 is one
/// that could run (capture's, compare's and profile's).
void name_unrunnable_files(const std::vector<std::string>& paths, bool saved_tensors = false,
                           bool programs = false);

/// --load-library PATH (repeatable): a library of custom operators loaded after the plugin.
void add_load_library(CLI::App& sub);
/// The libraries a command loads ($VIN_INSPECT_LIBRARIES, then --load-library): inputs no
/// output may overwrite.
std::vector<diagnostics::NamedPath> loaded_libraries();

/// --load-with-libtorch: read an archive the built-in reader cannot describe with LibTorch.
void add_load_with_libtorch(CLI::App& sub, bool& allowed);
/// inspect-model's records for such an archive: LibTorch's when `allowed`, else none.
diagnostics::LibTorchInspector libtorch_fallback(bool allowed);

}  // namespace vin::cli
