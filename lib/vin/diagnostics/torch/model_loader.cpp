#include "vin/diagnostics/torch/model_loader.h"

#include <caffe2/serialize/versions.h>
#include <torch/csrc/jit/serialization/import.h>
#include <torch/cuda.h>
#include <torch/version.h>

#include <algorithm>
#include <filesystem>
#include <optional>
#include <string_view>
#include <vector>

#include "vin/diagnostics/torchscript/archive_layout.h"
#include "vin/diagnostics/pickle/pickle_reader.h"
#include "vin/diagnostics/torchscript/torchscript_literal.h"
#include "vin/diagnostics/records/error.h"
#include "vin/diagnostics/plugin/log_sink.h"
#include "vin/diagnostics/text/printable.h"
#include "vin/diagnostics/torch/quantized_conv_rewrite.h"
#include "vin/diagnostics/formats/model_file.h"

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

namespace {

std::vector<std::string_view> split_lines(std::string_view text) {
  std::vector<std::string_view> lines;
  std::size_t pos = 0;
  while (pos <= text.size()) {
    const std::size_t end = std::min(text.find('\n', pos), text.size());
    lines.push_back(text.substr(pos, end - pos));
    pos = end + 1;
  }
  return lines;
}

// `  File "code/__torch__/m.py", line 12, in forward` -> `code/__torch__/m.py:12, in forward`
std::string frame_position(std::string_view line) {
  const std::size_t open = line.find('"');
  const std::size_t close = line.find('"', open + 1);
  const std::size_t number = line.find(", line ", close);
  if (open == std::string_view::npos || close == std::string_view::npos ||
      number == std::string_view::npos)
    return std::string(line.substr(line.find_first_not_of(' ')));
  const std::size_t in = line.find(", in ", number);
  std::string where(line.substr(open + 1, close - open - 1));
  where += ":" + std::string(line.substr(
                     number + 7, (in == std::string_view::npos ? line.size() : in) - number - 7));
  if (in != std::string_view::npos) where += ", in " + std::string(line.substr(in + 5));
  return where;
}

// `/usr/lib/python3/dist-packages/torch/nn/modules/conv.py(459): _conv_forward` or
// `<string>(4): <module>`: a frame of the Python stack a traced archive records; an exception line
// (`RuntimeError: ... (3): ...`) has its `: ` before the first parenthesis
bool is_python_frame(std::string_view line) {
  const std::size_t open = line.find('(');
  const std::size_t close = line.find("): ");
  if (open == std::string_view::npos || close == std::string_view::npos || close <= open + 1 ||
      line.substr(0, open).find(": ") != std::string_view::npos)
    return false;
  const std::string_view number = line.substr(open + 1, close - open - 1);
  return std::all_of(number.begin(), number.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// LibTorch's interpreter rebuilds a raised message through `what()`, so a message holding a NUL
// reaches us cut at it (Python's torch prints it cut too). When the raise's message is a literal,
// the serialized code the report quotes holds it whole: `ops.prim.RaiseException("a\000b", ...)`.
// The literal is the message when what we were given is its text up to its first NUL.
std::optional<std::string> message_cut_at_nul(const std::vector<std::string_view>& lines,
                                              std::size_t message_line, std::string_view cut) {
  constexpr std::string_view kRaise = "ops.prim.RaiseException(";
  // a traced or scripted report may go on with the Python source (`original code`): not ours
  std::size_t serialized_end = message_line;
  for (std::size_t i = 0; i < message_line; ++i)
    if (lines[i].substr(0, 39) == "Traceback of TorchScript, original code") {
      serialized_end = i;
      break;
    }
  for (std::size_t i = serialized_end; i-- > 0;) {
    const std::size_t at = lines[i].find(kRaise);
    if (at == std::string_view::npos) continue;
    std::string_view rest = lines[i].substr(at + kRaise.size());
    if (rest.empty() || (rest[0] != '"' && rest[0] != '\'')) return std::nullopt;
    std::size_t end = 1;
    while (end < rest.size() && rest[end] != rest[0]) end += rest[end] == '\\' ? 2 : 1;
    if (end >= rest.size()) return std::nullopt;
    try {
      std::string whole = decode_string_literal(rest.substr(0, end + 1));
      const std::size_t nul = whole.find('\0');
      if (nul == std::string::npos) return std::nullopt;
      std::string_view before(whole.data(), nul);
      while (!before.empty() && (before.back() == ' ' || before.back() == '\r'))
        before.remove_suffix(1);
      if (before != cut) return std::nullopt;
      return whole;
    } catch (const UnsupportedPickle&) {
      return std::nullopt;
    }
  }
  return std::nullopt;
}

}  // namespace

ForwardFailure describe_forward_failure(const std::exception& error) {
  const auto* c10_error = dynamic_cast<const c10::Error*>(&error);
  const std::string text = c10_error ? c10_error->what_without_backtrace() : error.what();
  ForwardFailure failure;
  failure.report = printable_lines(text);
  constexpr std::string_view kHeader =
      "The following operation failed in the TorchScript interpreter.";
  if (std::string_view(text).substr(0, kHeader.size()) != kHeader) {
    failure.reason = describe_torch_error(error);
    return failure;
  }
  // the report: a header, traceback sections of `  File "...", line N, in F` frames with their
  // code indented below, then the exception line `RuntimeError: ...` (or `builtins.X: ...`)
  const auto lines = split_lines(text);
  std::size_t last_frame = lines.size();
  for (std::size_t i = 0; i < lines.size(); ++i)
    if (lines[i].substr(0, 8) == "  File \"") last_frame = i;
  // a traced archive's report has a second section after the frames: `Traceback of TorchScript,
  // original code (most recent call last):` and the Python frames the trace ran in, one a line
  // (`/path/conv.py(459): _conv_forward`), before the exception line
  std::size_t message = lines.size();
  for (std::size_t i = last_frame == lines.size() ? 1 : last_frame + 1; i < lines.size(); ++i)
    if (!lines[i].empty() && lines[i][0] != ' ' &&
        lines[i].substr(0, 24) != "Traceback of TorchScript" && !is_python_frame(lines[i])) {
      message = i;
      break;
    }
  if (last_frame != lines.size()) failure.where = printable(frame_position(lines[last_frame]));
  if (message == lines.size()) {
    failure.reason = "the TorchScript interpreter gave no reason";
    return failure;
  }
  std::string_view first = lines[message];
  for (std::string_view prefix : {"RuntimeError: ", "builtins."})
    if (first.substr(0, prefix.size()) == prefix) first.remove_prefix(prefix.size());
  // `builtins.ValueError: msg` keeps its class (`ValueError: `) ahead of the message
  const std::size_t class_label =
      lines[message].substr(0, 9) == "builtins." && first.find(": ") != std::string_view::npos
          ? first.find(": ") + 2
          : 0;
  // a message of several lines (`raise ValueError("a\nb")`) is the model's own: kept whole, its
  // newlines escaped by printable(); LibTorch separates further detail (the backends an operator
  // is registered for) by a blank line, and a C++ backtrace would begin "Exception raised from"
  std::string reason(first);
  for (std::size_t i = message + 1; i < lines.size(); ++i) {
    if (lines[i].empty() || lines[i].substr(0, 21) == "Exception raised from") break;
    reason += '\n';
    reason += lines[i];
  }
  while (!reason.empty() && (reason.back() == ' ' || reason.back() == '\r')) reason.pop_back();
  if (auto whole = message_cut_at_nul(
          lines, message, std::string_view(reason).substr(std::min(class_label, reason.size()))))
    reason = std::string(first.substr(0, class_label)) + *whole;
  failure.reason =
      printable(reason.empty() ? "the TorchScript interpreter gave no reason" : reason);
  return failure;
}

namespace {

// PyTorch's own operator namespaces: an operator of theirs that is missing was added by a newer
// PyTorch than this LibTorch; any other namespace is an extension's (torchvision, a team's own)
bool is_pytorch_namespace(std::string_view ns) {
  for (std::string_view own : {"aten", "prim", "quantized", "_quantized", "prepacked", "cuda",
                               "profiler", "onednn", "mkldnn", "mkldnn_prepacked", "_caffe2"})
    if (ns == own) return true;
  return false;
}

// where torchvision keeps its operator library: Debian's python3-torchvision (the file itself
// when it is installed here), and a pip install
std::string torchvision_library_hint() {
  const std::filesystem::path debian = "/usr/lib/python3/dist-packages/torchvision";
  std::string found;
  std::error_code ec;
  for (std::filesystem::directory_iterator it(debian, ec), end; !ec && it != end;
       it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.rfind("_C.", 0) == 0 && name.size() > 3 && name.substr(name.size() - 3) == ".so") {
      found = it->path().string();
      break;
    }
  }
  return (found.empty() ? debian.string() + "/_C.cpython-3*-x86_64-linux-gnu.so" : found) +
         " (Debian's python3-torchvision) or torchvision/_C.so in a pip install's site-packages";
}

}  // namespace

std::optional<std::string> unknown_operator(std::string_view reason) {
  constexpr std::string_view kPrefix = "Unknown builtin op: ";
  const std::size_t start = reason.find(kPrefix);
  if (start == std::string_view::npos) return std::nullopt;
  std::string_view name = reason.substr(start + kPrefix.size());
  const std::size_t end =
      name.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_:.");
  name = name.substr(0, end);
  while (!name.empty() && name.back() == '.') name.remove_suffix(1);
  if (name.find("::") == std::string_view::npos) return std::nullopt;
  return std::string(name);
}

std::string unknown_operator_message(const std::string& op) {
  const std::string ns = op.substr(0, op.find("::"));
  if (is_pytorch_namespace(ns))
    return "it calls operator " + op +
           ", which LibTorch " TORCH_VERSION
           " does not have: the archive was written by a newer PyTorch; use a vin-inspect built "
           "against that PyTorch's LibTorch";
  std::string message = "it calls operator " + op + " (namespace " + ns +
                        "), which no library loaded into LibTorch " TORCH_VERSION
                        " registers: pass the library that registers it with --load-library (or "
                        "VIN_INSPECT_LIBRARIES)";
  if (ns == "torchvision") message += "; torchvision's is " + torchvision_library_hint();
  return message;
}

c10::Device resolve_device(const std::string& device, const std::string& option) {
  const std::string given = option + " " + printable(device, 100) + ": ";
  c10::Device parsed(c10::kCPU);
  try {
    parsed = c10::Device(device);
  } catch (const std::exception&) {
    throw UsageError(given + "not a device (expected e.g. cpu, cuda, cuda:0)");
  }
  if (parsed.is_cuda()) {
    if (!torch::cuda::is_available())
      throw UsageError(given + "not available: this LibTorch build or machine has no CUDA device");
    const auto count = static_cast<std::int64_t>(torch::cuda::device_count());
    if (parsed.has_index() && parsed.index() >= count)
      throw UsageError(given + "not available: " + std::to_string(count) +
                       " CUDA device(s) present");
  } else if (!parsed.is_cpu() && !parsed.is_meta()) {
    throw UsageError(given + "not supported (use cpu or cuda[:N])");
  } else if (parsed.has_index() && parsed.index() != 0) {
    // LibTorch parses cpu:1 and maps it to the one CPU device; it does not exist
    const std::string kind = parsed.is_cpu() ? "cpu" : "meta";
    throw UsageError(given + "no such device: there is one " + kind + " device (" + kind +
                     " or " + kind + ":0)");
  }
  return parsed;
}

namespace {

// LibTorch's zip reader reading the file the probe opened, instead of opening the path again.
class InputFileAdapter : public caffe2::serialize::ReadAdapterInterface {
 public:
  explicit InputFileAdapter(InputFilePtr file) : file_(std::move(file)) {}
  size_t size() const override { return static_cast<size_t>(file_->size()); }
  size_t read(uint64_t pos, void* buf, size_t n, const char* /*what*/) const override {
    return file_->read_at(pos, buf, n);
  }

 private:
  InputFilePtr file_;
};

}  // namespace

torch::jit::Module load_torchscript_archive(const std::string& path, const std::string& device) {
  return load_torchscript_archive(open_torchscript_archive(path), device);
}

torch::jit::Module load_torchscript_archive(const ArchiveLayout& layout,
                                            const std::string& device) {
  const std::string& path = layout.path();
  if (layout.format_version > caffe2::serialize::kMaxSupportedFileFormatVersion) {
    throw Error(path + ": archive file format version " + std::to_string(layout.format_version) +
                " is newer than LibTorch " TORCH_VERSION " can read (at most " +
                std::to_string(caffe2::serialize::kMaxSupportedFileFormatVersion) +
                "); it was written by a newer PyTorch");
  }
  check_archive_records(layout);
  const c10::Device map_location = resolve_device(device);
  try {
    const QuantizedConvRewriteCounts before = quantized_conv_rewrite_counts();
    torch::jit::Module module = [&] {
      const QuantizedConvRewriteScope skip_what_it_cannot_change;
      return torch::jit::load(std::make_shared<InputFileAdapter>(layout.zip->shared_file()),
                              map_location);
    }();
    const QuantizedConvRewriteCounts after = quantized_conv_rewrite_counts();
    log_line(LogLevel::debug, "load: LibTorch's rewrite of old quantized convolutions ran on " +
                                  std::to_string(after.ran - before.ran) + " module(s), skipped " +
                                  std::to_string(after.skipped - before.skipped) +
                                  " that call no quantized operator");
    return module;
  } catch (const std::exception& e) {
    const std::string reason = describe_torch_error(e);
    const auto op = unknown_operator(reason);
    throw Error(path + ": LibTorch " TORCH_VERSION " cannot load this archive: " +
                (op ? unknown_operator_message(*op) : reason));
  }
}

}  // namespace vin::diagnostics
