#include "vin/diagnostics/model_loader.h"

#include <caffe2/serialize/versions.h>
#include <torch/csrc/jit/serialization/import.h>
#include <torch/cuda.h>
#include <torch/version.h>

#include "vin/diagnostics/archive_layout.h"
#include "vin/diagnostics/error.h"
#include "vin/diagnostics/printable.h"

namespace vin::diagnostics {

std::string describe_torch_error(const std::exception& error) {
  std::string text;
  if (const auto* c10_error = dynamic_cast<const c10::Error*>(&error))
    text = c10_error->what_without_backtrace();
  else
    text = error.what();
  // the first non-blank line carries the reason; the rest is context or a backtrace
  std::size_t start = text.find_first_not_of(" \n\r\t");
  if (start == std::string::npos) return "unknown error";
  std::size_t end = text.find('\n', start);
  std::string line = text.substr(start, end == std::string::npos ? std::string::npos : end - start);
  while (!line.empty() && (line.back() == ' ' || line.back() == '\r' || line.back() == ':'))
    line.pop_back();
  // LibTorch quotes archive content in some messages (e.g. a damaged pickle's global name)
  return printable(line);
}

c10::Device resolve_device(const std::string& device) {
  c10::Device parsed(c10::kCPU);
  try {
    parsed = c10::Device(device);
  } catch (const std::exception&) {
    throw UsageError("invalid device '" + device + "' (expected e.g. cpu, cuda, cuda:0)");
  }
  if (parsed.is_cuda()) {
    if (!torch::cuda::is_available())
      throw UsageError("device '" + device +
                       "' is not available: this LibTorch build or machine has no CUDA device");
    const auto count = static_cast<std::int64_t>(torch::cuda::device_count());
    if (parsed.has_index() && parsed.index() >= count)
      throw UsageError("device '" + device + "' is not available: " + std::to_string(count) +
                       " CUDA device(s) present");
  } else if (!parsed.is_cpu() && !parsed.is_meta()) {
    throw UsageError("device '" + device + "' is not supported (use cpu or cuda[:N])");
  }
  return parsed;
}

torch::jit::Module load_torchscript_archive(const std::string& path, const std::string& device) {
  const ArchiveLayout layout = probe_torchscript_archive(path);
  if (layout.format_version > caffe2::serialize::kMaxSupportedFileFormatVersion) {
    throw Error(path + ": archive file format version " + std::to_string(layout.format_version) +
                " is newer than LibTorch " TORCH_VERSION " can read (at most " +
                std::to_string(caffe2::serialize::kMaxSupportedFileFormatVersion) +
                "); it was written by a newer PyTorch");
  }
  check_archive_records(path, layout);
  const c10::Device map_location = resolve_device(device);
  try {
    return torch::jit::load(path, map_location);
  } catch (const std::exception& e) {
    throw Error(
        path + ": LibTorch " TORCH_VERSION " cannot load this archive: " + describe_torch_error(e));
  }
}

}  // namespace vin::diagnostics
