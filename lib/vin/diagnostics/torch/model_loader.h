// Loading a TorchScript archive with LibTorch, with one-line errors (docs/cli.md).
#pragma once

#include <torch/csrc/jit/api/module.h>

#include <optional>
#include <string>
#include <string_view>

#include "vin/diagnostics/torchscript/archive_layout.h"

namespace vin::diagnostics {

/// Loads the probed archive with torch::jit::load, tensors mapped to `device` (e.g. "cpu",
/// "cuda:0"): LibTorch reads the file the probe opened (a read adapter over its descriptor), so
/// a stream is read once. Checks the records first (check_archive_records) and turns every
/// LibTorch failure into an Error naming the file, without a C++ backtrace.
torch::jit::Module load_torchscript_archive(const ArchiveLayout& archive,
                                            const std::string& device = "cpu");
/// The same for the archive at `path` (open_torchscript_archive first: formats/model_file.h).
torch::jit::Module load_torchscript_archive(const std::string& path,
                                            const std::string& device = "cpu");

/// Parses a device string ("cpu", "cuda", "cuda:1") and checks that this LibTorch build and
/// machine can use it; throws UsageError naming `option` (the option that gave it) and the
/// value otherwise.
c10::Device resolve_device(const std::string& device, const std::string& option = "--device");

/// The one-line reason of a LibTorch exception: what_without_backtrace() for c10::Error, first
/// line only (TorchScript compile errors go on with source excerpts).
std::string describe_torch_error(const std::exception& error);

/// The operator a LibTorch load failure names as unknown (`Unknown builtin op: aten::foo.` ->
/// `aten::foo`), or nothing when the reason is another.
std::optional<std::string> unknown_operator(std::string_view reason);

/// What to say about an archive that calls operator `op` this process has not registered: one
/// of PyTorch's own (the archive is newer than this LibTorch) or an extension's.
std::string unknown_operator_message(const std::string& op);

/// Why a forward failed, from the exception it raised.
struct ForwardFailure {
  /// LibTorch's own message for the failing operation (`mat1 and mat2 shapes cannot be
  /// multiplied (2x5 and 6x8)`), or the exception class and message the model raised
  /// (`ValueError: Input shape must be (N, C, H, W)`); one line, a message's own newlines escaped
  /// (`\x0a`).
  std::string reason;
  /// Where in the source it failed, `FILE:LINE, in FUNCTION` (the original Python source when the
  /// archive carries it, else the archive's code/); empty when unknown.
  std::string where;
  /// The interpreter's whole report: TorchScript frames and the message, never C++ frames.
  std::string report;
};

/// Reads the TorchScript interpreter's report out of what a failed forward raised.
ForwardFailure describe_forward_failure(const std::exception& error);

}  // namespace vin::diagnostics
