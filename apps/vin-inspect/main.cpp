// vin-inspect: parses the command line, calls one library entry point per subcommand, prints the
// records. Errors from the library arrive as exceptions and are reported here, once.
#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <atomic>
#include <cctype>
#include <cfloat>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <iostream>
#include <memory>
#include <sstream>
#include <unistd.h>
#include <unordered_map>

#include "help_format.h"
#include "vin/diagnostics/archive/archive_layout.h"
#include "vin/diagnostics/archive/model_source.h"
#include "vin/diagnostics/config/inspect_config.h"
#include "vin/diagnostics/diff/record_sources.h"
#include "vin/diagnostics/output/output_format.h"
#include "vin/diagnostics/output/output_sink.h"
#include "vin/diagnostics/plugin/operator_libraries.h"
#include "vin/diagnostics/plugin/torch_plugin.h"
#include "vin/diagnostics/capture/capture_request.h"
#include "vin/diagnostics/capture/profile_request.h"
#include "vin/diagnostics/output/chrome_trace.h"
#include "vin/diagnostics/records/error.h"
#include "vin/diagnostics/text/printable.h"
#include "vin/diagnostics/text/suggest.h"

namespace vd = vin::diagnostics;
namespace fs = std::filesystem;

namespace {

constexpr const char* kProgram = "vin-inspect";

void clear_progress_line();

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

// Libraries of custom operators to load right after the plugin: $VIN_INSPECT_LIBRARIES, then
// each --load-library of the command, in order.
std::vector<std::string>& operator_libraries() {
  static std::vector<std::string> libraries;
  return libraries;
}

void add_load_library(CLI::App& sub) {
  sub.add_option("--load-library", operator_libraries(),
                 "Load this shared library of custom operators before the archive, as "
                 "torch.ops.load_library does (repeatable; also $VIN_INSPECT_LIBRARIES, "
                 "colon-separated)")
      ->type_name("PATH");
}

// The LibTorch plugin, loaded on first use: $VIN_INSPECT_PLUGIN, else beside this binary (the
// build tree), else where `cmake --install` puts it relative to this binary. The operator
// libraries are loaded once, after it.
const vd::TorchPlugin& torch_plugin() {
  if (!VIN_WITH_TORCH)
    throw vd::UsageError(
        "this vin-inspect was built without LibTorch: capture, compare and --load-with-libtorch "
        "need it "
        "(build with LibTorch, see the README's Building by hand)");
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
    std::vector<std::string> libraries;
    if (const char* listed = std::getenv(vd::kOperatorLibrariesVariable); listed)
      libraries = vd::split_library_list(listed);
    const auto& given = operator_libraries();
    libraries.insert(libraries.end(), given.begin(), given.end());
    for (const auto& library : libraries) spdlog::debug("loading operator library {}", library);
    vd::load_operator_libraries(libraries, plugin.libtorch_version);
    return true;
  }();
  (void)libraries_loaded;
  return plugin;
}

// inspect-model's records for an archive the structure reader does not understand: LibTorch's,
// when the user allowed it with --load-with-libtorch (it runs the archive's code); else none.
vd::LibTorchInspector libtorch_fallback(bool allowed) {
  if (!allowed) return nullptr;
  return [](const vd::ArchiveLayout& archive, const vd::InspectDetails& details,
            const std::string& why) {
    spdlog::debug("{}: {}; reading it with LibTorch instead ({})", archive.path(), why,
                  vd::kLoadWithLibTorchFlag);
    return torch_plugin().describe_with_libtorch(archive, details);
  };
}

void add_load_with_libtorch(CLI::App& sub, bool& allowed) {
  sub.add_flag(vd::kLoadWithLibTorchFlag, allowed,
               "Read an archive the built-in reader cannot describe with LibTorch's loader; this "
               "RUNS the archive's TorchScript (__setstate__), so use it only on trusted files");
}

// Options every subcommand shares.
struct CommonOptions {
  std::string format = "jsonl";
  std::string output;
};

// One subcommand, described once: --help, the man page and the README list the same.
struct Command {
  const char* name;
  const char* alias;  // or nullptr
  const char* summary;
  const char* example;
  // adds the options and sets the action, which returns the exit status
  std::function<void(CLI::App&, std::function<int()>&)> define;
  // the exit status for unreadable input or a failed write: 1, or 2 for diff (as diff(1))
  int error_status = 1;
};

// Whether two paths name one file: the same file now, or the same path once resolved (for
// files that do not exist yet).
bool same_file(const std::string& a, const std::string& b) {
  std::error_code ec;
  if (fs::equivalent(a, b, ec)) return true;
  std::error_code ea, eb;
  const fs::path ca = fs::weakly_canonical(a, ea), cb = fs::weakly_canonical(b, eb);
  return !ea && !eb && ca == cb;
}

// The libraries the command loads (VIN_INSPECT_LIBRARIES, then --load-library): inputs too.
std::vector<std::string> loaded_libraries() {
  std::vector<std::string> out;
  if (const char* listed = std::getenv("VIN_INSPECT_LIBRARIES"))
    for (std::string_view rest = listed; !rest.empty();) {
      const std::size_t colon = std::min(rest.find(':'), rest.size());
      if (colon > 0) out.emplace_back(rest.substr(0, colon));
      rest.remove_prefix(std::min(colon + 1, rest.size()));
    }
  out.insert(out.end(), operator_libraries().begin(), operator_libraries().end());
  return out;
}

// Every file the command writes (-o, and `others` such as --save) is none of its inputs
// (`inputs`, and the libraries it loads), not another of its outputs, whether or not it exists
// yet, and not standard output while the records go there: a usage error, before anything runs.
void refuse_outputs_onto_inputs(
    const CommonOptions& common, std::vector<std::string> inputs,
    const std::vector<std::pair<const char*, std::string>>& others = {}) {
  std::vector<std::pair<const char*, std::string>> outputs = others;
  if (!common.output.empty() && common.output != "-")
    outputs.insert(outputs.begin(), {"--output", common.output});
  else
    for (const auto& [flag, path] : others)
      if (vd::names_standard_output(path))
        throw vd::UsageError(std::string(flag) + " " + path + " is standard output, where the "
                             "records go; give it a file of its own, or the records one with -o");
  const std::vector<std::string> libraries = loaded_libraries();
  inputs.insert(inputs.end(), libraries.begin(), libraries.end());
  for (std::size_t i = 0; i < outputs.size(); ++i) {
    const auto& [flag, path] = outputs[i];
    for (const auto& input : inputs)
      if (same_file(path, input))
        throw vd::UsageError(std::string(flag) + " " + path + " is an input of this command (" +
                             input + "); refusing to overwrite it");
    for (std::size_t j = i + 1; j < outputs.size(); ++j)
      if (same_file(path, outputs[j].second))
        throw vd::UsageError(std::string(flag) + " and " + outputs[j].first + " name the same "
                             "file, " + path + "; give each its own");
  }
}

// Writes `text` to stdout or to the -o file (write_output: every write checked, a file replaced
// only once complete); refuses to overwrite an input of the command.
void emit(const CommonOptions& common, const std::string& text,
          const std::vector<std::string>& inputs) {
  refuse_outputs_onto_inputs(common, inputs);
  vd::write_output(common.output, text);
}

// The text `write` produces; running out of memory while formatting names `file`.
template <class Write>
std::string format_records(const std::string& file, Write&& write) {
  return vd::naming_out_of_memory(file, "formatting the records", [&] {
    std::ostringstream text;
    write(text);
    return text.str();
  });
}

void add_common_options(CLI::App& sub, CommonOptions& common) {
  sub.add_option("--format", common.format, "Output format: jsonl (default), json or table")
      ->check(CLI::IsMember({"jsonl", "json", "table"}));
  sub.add_option("-o,--output", common.output, "Write the records to FILE instead of stdout")
      ->type_name("FILE");
}

// A number option checked as text before anything runs: finite, within [low, high] (`low`
// excluded when `low_open`), else a usage error that CLI11 prefixes with the flag and that
// repeats the text as given (CLI11's own range validators print the bounds of a double in full).
CLI::Validator number_within(double low, bool low_open, double high, const std::string& what) {
  return CLI::Validator(
      [=](std::string& text) -> std::string {
        try {
          std::size_t used = 0;
          const double value = std::stod(text, &used);
          if (used == text.size() && std::isfinite(value) && (low_open ? value > low : value >= low) &&
              value <= high)
            return "";
        } catch (const std::exception&) {
        }
        return "must be " + what + ", got '" + vd::printable(text, 100) + "'";
      },
      what);
}

// An integer option of at least 1 (an int64), checked as text: else "must be WHAT, got 'TEXT'".
CLI::Validator positive_integer(const std::string& what) {
  return CLI::Validator(
      [what](std::string& text) -> std::string {
        try {
          std::size_t used = 0;
          if (std::stoll(text, &used) > 0 && used == text.size()) return "";
        } catch (const std::exception&) {
        }
        return "must be " + what + ", got '" + vd::printable(text, 100) + "'";
      },
      "N > 0");
}

// An integer option within [low, high], checked as text: else "must be WHAT, got 'TEXT'".
CLI::Validator integer_within(long long low, long long high, const std::string& what) {
  return CLI::Validator(
      [=](std::string& text) -> std::string {
        try {
          std::size_t used = 0;
          const long long value = std::stoll(text, &used);
          if (used == text.size() && value >= low && value <= high) return "";
        } catch (const std::exception&) {
        }
        return "must be " + what + ", got '" + vd::printable(text, 100) + "'";
      },
      "N");
}

// What a command hands over to be destroyed by the process's end (a model's teardown is work no
// one waits for: 0.45 s for 5,000 modules); leave() ends the process without destroying it.
std::vector<std::shared_ptr<void>>& left_to_the_exit() {
  static std::vector<std::shared_ptr<void>> kept;
  return kept;
}

// profile's progress on a terminal's stderr: one line rewritten in place, cleared at the end;
// nothing when stderr is not a terminal (a CI log, a file).
class ProgressLine;
std::atomic<ProgressLine*> g_progress_line{nullptr};  // the one on the terminal now

class ProgressLine {
 public:
  ProgressLine() : on_(isatty(STDERR_FILENO) == 1) {
    if (on_) g_progress_line = this;
  }
  ~ProgressLine() {
    if (on_) g_progress_line = nullptr;
    clear();
  }
  // takes the line away (before a message, and at the end)
  void clear() {
    if (on_ && shown_.exchange(false)) std::cerr << "\r\033[K" << std::flush;
  }
  ProgressLine(const ProgressLine&) = delete;
  ProgressLine& operator=(const ProgressLine&) = delete;
  void show(vd::ProfilePhase phase, std::int64_t done, std::int64_t total) {
    if (!on_) return;
    std::cerr << "\r\033[K" << kProgram << ": "
              << (phase == vd::ProfilePhase::warmup ? "warm-up forward " : "timed forward ")
              << done << "/" << total << std::flush;
    shown_ = true;
  }

 private:
  bool on_;
  std::atomic<bool> shown_{false};  // also cleared from the watchdog's thread (on_abandoned)
};

void clear_progress_line() {
  if (ProgressLine* line = g_progress_line.load()) line->clear();
}

// The options of every command that runs an archive's forward (capture, compare, profile; the
// forward runner's ForwardRun), added in one place so that the commands cannot drift apart:
// --inputs, or --shape with --seed and --int-high; --eval, --quantized-engine, --timeout,
// --load-library.
struct RunOptions {
  std::vector<std::string> inputs;
  std::vector<std::string> shapes;  // --shape texts, parsed by shaped_inputs()
  std::string seed = "0";           // --seed text, parsed by shaped_inputs() as torch does
  vd::ShapedInputs shaped;          // --int-high
  bool eval = false;
  std::optional<std::string> quantized_engine;
  std::optional<double> timeout_seconds;

  // The --shape inputs, when given; a usage error when neither they nor --inputs are and
  // `required` (compare asks only when a side is an archive, which the plugin tells).
  std::optional<vd::ShapedInputs> shaped_inputs(bool required = true) const {
    if (shapes.empty()) {
      if (inputs.empty() && required)
        throw vd::UsageError("--inputs FILE or --shape NAME=DIMS is required");
      return std::nullopt;
    }
    vd::ShapedInputs out = shaped;
    out.seed = vd::parse_seed(seed);
    for (const auto& text : shapes) out.shapes.push_back(vd::parse_shape_spec(text));
    vd::check_shaped_inputs(out);
    return out;
  }
  // What the options say of a run (its archive and device are the command's).
  void apply_to(vd::ForwardRun& run, bool inputs_required = true) const {
    run.inputs = inputs;
    run.shaped = shaped_inputs(inputs_required);
    run.eval = eval;
    run.quantized_engine = quantized_engine;
    run.timeout_seconds = timeout_seconds;
  }
};

// `timeout_help`: what happens to the records of a forward stopped by --timeout
void add_run_options(CLI::App& sub, RunOptions& run, const std::string& inputs_help,
                     const std::string& timeout_help =
                         "the records so far are printed, then an error") {
  auto* inputs = sub.add_option("--inputs", run.inputs, inputs_help)->type_name("FILE");
  auto* shape = sub.add_option("--shape", run.shapes,
                               "Make forward's argument NAME instead of reading --inputs: "
                               "NAME=1x3x224x224[:DTYPE] (repeatable; torch.randn, or "
                               "torch.randint for integer dtypes, after torch.manual_seed)")
                    ->type_name("NAME=DIMS[:DTYPE]");
  inputs->excludes(shape);
  sub.add_option("--seed", run.seed,
                 "The generator's seed for --shape, as torch.manual_seed takes it (default 0)")
      ->type_name("N")
      ->check(CLI::Validator(
          [](std::string& text) -> std::string {
            try {
              vd::parse_seed(text);
              return "";
            } catch (const vd::UsageError&) {
              return "must be an integer in [-9223372036854775808, 18446744073709551615] (as "
                     "torch.manual_seed), got '" + vd::printable(text, 100) + "'";
            }
          },
          "SEED"));
  sub.add_option("--int-high", run.shaped.int_high,
                 "Integer --shape tensors are drawn from [0, N) (default 2)")
      ->type_name("N")
      ->check(positive_integer("an integer in [1, 9223372036854775807]"));
  sub.add_flag("--eval", run.eval, "Switch every module to eval mode first");
  sub.add_option("--quantized-engine", run.quantized_engine,
                 "Backend of quantized operators: qnnpack, fbgemm, onednn or x86, as "
                 "torch.backends.quantized.engine (default: LibTorch's)")
      ->type_name("ENGINE")
      ->check(CLI::IsMember({"qnnpack", "fbgemm", "onednn", "x86"}));
  sub.add_option("--timeout", run.timeout_seconds,
                 "Stop a forward that runs longer than SECONDS; " + timeout_help)
      ->type_name("SECONDS")
      ->check(number_within(0, true, vd::kMaxTimeoutSeconds,
                            "a number of seconds above 0 and at most " +
                                std::to_string(static_cast<long long>(vd::kMaxTimeoutSeconds))));
  add_load_library(sub);
}

// A positive integer option bound to one of the capture's quotas (its default shown); zero or
// negative is a usage error, which CLI11 prefixes with the flag.
void add_limit(CLI::App& sub, const std::string& flag, std::int64_t& value,
               const std::string& help) {
  sub.add_option(flag, value, help + " (default " + std::to_string(value) + ")")
      ->type_name("N")
      ->check(positive_integer("a positive integer"));
}

std::vector<Command> commands(CommonOptions& common) {
  return {
      {"inspect-config", "config",
       "Describe a configuration tree from its YAML rendering (a .yaml file, or an archive's "
       "config.yaml)",
       "vin-inspect inspect-config net.pt --format table",
       [&common](CLI::App& sub, std::function<int()>& action) {
         auto config = std::make_shared<std::string>();
         sub.add_option("CONFIG", *config,
                        "YAML rendering (.yaml/.yml) or a TorchScript archive carrying "
                        "one as its config.yaml extra file")
             ->required();
         add_common_options(sub, common);
         action = [&common, config] {
           spdlog::debug("inspecting configuration {}", *config);
           const vd::ModelStructureSpec spec = vd::inspect_config_file(*config);
           emit(common,
                format_records(*config,
                               [&](std::ostream& out) {
                                 vd::write_structure_spec(out, spec,
                                                          vd::parse_output_format(common.format));
                               }),
                {*config});
           return 0;
         };
       }},
      {"inspect-model", "model",
       "Describe an archive's registered modules, parameters and buffers (no forward pass)",
       "vin-inspect inspect-model net.pt --format table",
       [&common](CLI::App& sub, std::function<int()>& action) {
         auto archive = std::make_shared<std::string>();
         auto with_libtorch = std::make_shared<bool>(false);
         auto details = std::make_shared<vd::InspectDetails>();
         auto all = std::make_shared<bool>(false);
         sub.add_option("ARCHIVE", *archive, "TorchScript archive written by torch.jit.save")
             ->required();
         sub.add_flag("--tensors", details->tensors,
                      "Each parameter and buffer (shape, dtype, device, bytes, storage CRC-32) "
                      "and the model's size in bytes");
         sub.add_flag("--attributes", details->attributes,
                      "Each module's settings: attributes and constants such as kernel_size");
         sub.add_flag("--signature", details->signature,
                      "The root's forward and public methods: arguments, defaults, return type");
         sub.add_flag("--all", *all, "--tensors --attributes --signature");
         add_load_with_libtorch(sub, *with_libtorch);
         add_common_options(sub, common);
         action = [&common, archive, with_libtorch, details, all] {
           spdlog::debug("inspecting {}", *archive);
           if (*all) *details = vd::InspectDetails{true, true, true};
           const vd::ModelMetadata model =
               vd::describe_archive(*archive, *details, libtorch_fallback(*with_libtorch));
           spdlog::debug("{} modules, {} parameters", model.modules().size(),
                         model.total_parameters());
           emit(common,
                format_records(*archive,
                               [&](std::ostream& out) {
                                 vd::write_model_metadata(out, model,
                                                          vd::parse_output_format(common.format));
                               }),
                {*archive});
           return 0;
         };
       }},
      {"capture", nullptr,
       "Run the forward on inputs and record bounded samples of what enters and leaves each module",
       "vin-inspect capture net.pt --inputs batch.npz --module blocks.0 --format table",
       [&common](CLI::App& sub, std::function<int()>& action) {
         auto request = std::make_shared<vd::CaptureRequest>();
         auto run = std::make_shared<RunOptions>();
         auto modules = std::make_shared<std::vector<std::string>>();
         auto quotas = std::make_shared<vd::CaptureQuotas>();  // the defaults
         sub.add_option("ARCHIVE", request->run.archive,
                        "TorchScript archive written by torch.jit.save")
             ->required();
         add_run_options(sub, *run,
                         "Inputs for one forward: .npz, .npy or torch.save file (repeatable; one "
                         "forward per file, in order)");
         sub.add_option("--device", request->run.device,
                        "Where the archive is loaded and inputs placed (default cpu; cuda, cuda:N)")
             ->type_name("DEVICE");
         sub.add_option("--save", request->save_path,
                        "Also write each recorded snapshot's whole tensor to FILE.npz "
                        "(numpy.load reads it)")
             ->type_name("FILE.npz");
         add_limit(sub, "--save-max-bytes", request->save_max_bytes,
                   "Tensor bytes --save writes at most; tensors past it are counted, not written");
         sub.add_option("--module", *modules,
                        "Registered path to capture, e.g. blocks.0.lin or <root> (repeatable; "
                        "default: every module)")
             ->type_name("PATH");
         add_limit(sub, "--max-tensors", quotas->max_tensors, "Snapshots kept in all");
         add_limit(sub, "--max-samples-per-tensor", quotas->max_samples_per_tensor,
                   "Values copied per tensor");
         add_limit(sub, "--max-bytes", quotas->max_bytes, "Source-dtype bytes copied in all");
         add_limit(sub, "--max-traversal-nodes", quotas->max_traversal_nodes,
                   "Nodes visited per input/output walk");
         add_limit(sub, "--max-container-depth", quotas->max_container_depth,
                   "Container edges followed per walk");
         sub.add_flag("--stats", request->stats,
                      "Add statistics over each whole tensor and report the first non-finite one");
         auto fail_on_nonfinite = std::make_shared<bool>(false);
         sub.add_flag("--fail-on-nonfinite", *fail_on_nonfinite,
                      "Exit with status 3 when a tensor holds a NaN or an infinity (implies "
                      "--stats)");
         add_common_options(sub, common);
         action = [&common, request, run, modules, quotas, fail_on_nonfinite] {
           if (!modules->empty()) request->module_paths = *modules;
           run->apply_to(request->run);
           if (request->save_max_bytes > vd::kMaxSaveBytes)
             throw vd::UsageError("--save-max-bytes: at most " + std::to_string(vd::kMaxSaveBytes) +
                                  " (the .npz is written without zip64)");
           {
             std::vector<std::string> inputs = request->run.inputs;
             inputs.push_back(request->run.archive);
             std::vector<std::pair<const char*, std::string>> outputs;
             if (request->save_path) outputs.emplace_back("--save", *request->save_path);
             refuse_outputs_onto_inputs(common, inputs, outputs);
           }
           if (*fail_on_nonfinite) request->stats = true;
           request->limits = vd::CaptureLimits(*quotas);
           spdlog::debug("capturing {} on {} input file(s)", request->run.archive,
                         request->run.inputs.size());
           std::vector<std::string> inputs = request->run.inputs;
           inputs.push_back(request->run.archive);
           const auto print = [&common, inputs](const vd::CaptureResult& result) {
             emit(common,
                  format_records(inputs.back(),
                                 [&](std::ostream& out) {
                                   vd::write_capture(out, result.snapshots, result.summary,
                                                     vd::parse_output_format(common.format),
                                                     &result.sources);
                                 }),
                  inputs);
           };
           // a forward past --timeout that cannot be stopped: print, report, end (from the
           // plugin's watchdog thread, which then ends the process)
           request->on_abandoned = [print](const vd::CaptureResult& result) {
             try {
               print(result);
             } catch (const vd::Error&) {
             }
             std::cerr << kProgram << ": error: " << vd::printable(*result.error, 2000) << "\n";
           };
           const vd::CaptureResult result = torch_plugin().capture_archive(*request);
           print(result);
           if (!result.error_report.empty())
             spdlog::debug("the TorchScript interpreter's report:\n{}", result.error_report);
           if (result.error) throw vd::Error(*result.error);
           return *fail_on_nonfinite && result.summary.first_nonfinite ? 3 : 0;
         };
       }},
      {"profile", nullptr,
       "Time a forward and attribute its time, FLOPs and memory to each module and operator",
       "vin-inspect profile net.pt --shape x=1x3x224x224 --format table",
       [&common](CLI::App& sub, std::function<int()>& action) {
         auto request = std::make_shared<vd::ProfileRequest>();
         auto run = std::make_shared<RunOptions>();
         auto modules = std::make_shared<std::vector<std::string>>();
         auto trace = std::make_shared<std::string>();
         sub.add_option("ARCHIVE", request->run.archive,
                        "TorchScript archive written by torch.jit.save")
             ->required();
         add_run_options(sub, *run, "Inputs for the forward: one .npz, .npy or torch.save file",
                         "an error, and no records");
         sub.add_option("--device", request->run.device,
                        "Where the archive is loaded and inputs placed (default cpu; cuda, cuda:N)")
             ->type_name("DEVICE");
         sub.add_option("--module", *modules,
                        "Registered path or pattern to report, e.g. layer1.* (repeatable; "
                        "default: every module)")
             ->type_name("PATH");
         const std::string most = std::to_string(vd::kMaxProfileRuns);
         sub.add_option("--warmup", request->warmup,
                        "Forwards run first and not measured (default 3)")
             ->type_name("N")
             ->check(integer_within(0, vd::kMaxProfileRuns, "an integer in [0, " + most + "]"));
         sub.add_option("--runs", request->runs, "Timed forwards (default 10)")
             ->type_name("N")
             ->check(integer_within(1, vd::kMaxProfileRuns, "an integer in [1, " + most + "]"));
         sub.add_option("--trace", *trace,
                        "Also write the instrumented forward as Chrome trace events (Perfetto, "
                        "chrome://tracing open it)")
             ->type_name("FILE.json");
         add_common_options(sub, common);
         action = [&common, request, run, modules, trace] {
           if (!modules->empty()) request->module_paths = *modules;
           run->apply_to(request->run);
           if (request->run.inputs.size() > 1)
             throw vd::UsageError("--inputs: profile runs one forward; give one file");
           std::vector<std::string> inputs = request->run.inputs;
           inputs.push_back(request->run.archive);
           std::vector<std::pair<const char*, std::string>> outputs;
           if (!trace->empty()) outputs.emplace_back("--trace", *trace);
           refuse_outputs_onto_inputs(common, inputs, outputs);
           request->trace = !trace->empty();
           ProgressLine progress;
           request->on_progress = [&progress](vd::ProfilePhase phase, std::int64_t done,
                                              std::int64_t total) {
             progress.show(phase, done, total);
           };
           // a forward past --timeout that cannot be stopped (from the plugin's watchdog thread,
           // which then ends the process)
           request->on_abandoned = [&progress](const std::string& message) {
             progress.clear();
             std::cerr << kProgram << ": error: " << vd::printable(message, 2000) << "\n";
           };
           const vd::ProfileResult result = torch_plugin().profile_archive(*request);
           left_to_the_exit().push_back(result.models);
           request->on_progress = nullptr;
           progress.clear();
           if (!result.error_report.empty())
             spdlog::debug("the TorchScript interpreter's report:\n{}", result.error_report);
           if (result.error) throw vd::Error(*result.error);
           if (request->trace)
             vd::write_output(*trace, vd::chrome_trace_json(result.spans, request->run.archive,
                                                            result.records.summary));
           emit(common,
                format_records(request->run.archive,
                               [&](std::ostream& out) {
                                 vd::write_profile(out, result.records,
                                                   vd::parse_output_format(common.format));
                               }),
                inputs);
           return 0;
         };
       }},
      {"compare", nullptr,
       "Where two runs diverge: two archives (or saved tensors) on the same inputs, module call "
       "by module call",
       "vin-inspect compare net.pt net_half.pt --shape x=1x3x224x224 --format table",
       [&common](CLI::App& sub, std::function<int()>& action) {
         auto request = std::make_shared<vd::CompareRequest>();
         auto run = std::make_shared<RunOptions>();
         auto modules = std::make_shared<std::vector<std::string>>();
         sub.add_option("A", request->a.path,
                        "Archive, or tensors saved by capture --save or scripts/eager_capture.py")
             ->required();
         sub.add_option("B", request->b.path, "The same kinds of file to compare with A")
             ->required();
         add_run_options(sub, *run, "Inputs for one forward of each archive side (repeatable)");
         sub.add_option("--device-a", request->a.device, "Where A runs (default cpu)")
             ->type_name("DEVICE");
         sub.add_option("--device-b", request->b.device, "Where B runs (default cpu)")
             ->type_name("DEVICE");
         sub.add_option("--module", *modules,
                        "Registered path or pattern to compare (repeatable; default: every module)")
             ->type_name("PATH");
         sub.add_option("--atol", request->atol,
                        "Absolute tolerance (default: torch.testing's for the dtype)")
             ->type_name("X")
             ->check(number_within(0, false, DBL_MAX, "a finite number >= 0"));
         sub.add_option("--rtol", request->rtol,
                        "Relative tolerance (default: torch.testing's for the dtype)")
             ->type_name("X")
             ->check(number_within(0, false, DBL_MAX, "a finite number >= 0"));
         sub.add_flag("--equal-nan", request->equal_nan, "NaN on both sides counts as equal");
         add_limit(sub, "--max-compare-bytes", request->max_compare_bytes,
                   "A's tensors kept whole; past it, pairs are compared by statistics");
         add_limit(sub, "--max-traversal-nodes", request->max_traversal_nodes,
                   "Nodes visited per input/output walk");
         add_limit(sub, "--max-container-depth", request->max_container_depth,
                   "Container edges followed per walk");
         add_common_options(sub, common);
         action = [&common, request, run, modules] {
           if (!modules->empty()) request->module_paths = *modules;
           // which side is an archive (and so needs --inputs or --shape) compare_sides tells,
           // opening each file once
           run->apply_to(request->run, false);
           // a forward past --timeout that cannot be stopped: the message, then compare's
           // status for trouble (from the plugin's watchdog thread)
           request->on_abandoned = [](const std::string& message) {
             std::cerr << kProgram << ": error: " << vd::printable(message, 2000) << "\n";
             std::_Exit(2);
           };
           const vd::CompareResult result = torch_plugin().compare_sides(*request);
           std::vector<std::string> inputs = request->run.inputs;
           inputs.push_back(request->a.path);
           inputs.push_back(request->b.path);
           emit(common,
                format_records(request->b.path,
                               [&](std::ostream& out) {
                                 vd::write_comparison(out, result,
                                                      vd::parse_output_format(common.format));
                               }),
                inputs);
           if (result.error) throw vd::Error(*result.error);
           const vd::ComparisonSummary& s = result.summary;
           return s.beyond == 0 && s.only_in_a == 0 && s.only_in_b == 0 ? 0 : 1;
         };
       },
       2},
      {"diff", nullptr,
       "Compare two models, configurations or profiles: archives, YAML renderings or saved "
       "jsonl records",
       "vin-inspect diff yesterday.jsonl net.pt --ignore training",
       [&common](CLI::App& sub, std::function<int()>& action) {
         auto old_path = std::make_shared<std::string>();
         auto new_path = std::make_shared<std::string>();
         auto ignore = std::make_shared<std::vector<std::string>>();
         auto with_libtorch = std::make_shared<bool>(false);
         auto config = std::make_shared<bool>(false);
         sub.add_option("OLD", *old_path,
                        "Archive, YAML rendering, or the jsonl/json inspect-model, "
                        "inspect-config or profile wrote")
             ->required();
         sub.add_option("NEW", *new_path, "The same kind of file to compare with")->required();
         sub.add_option("--ignore", *ignore,
                        "A record field not to compare, e.g. training or storage_crc32 "
                        "(repeatable)")
             ->type_name("FIELD");
         sub.add_flag("--config", *config,
                      "Compare the config.yaml renderings archives carry, not their modules");
         add_load_with_libtorch(sub, *with_libtorch);
         add_common_options(sub, common);
         action = [&common, old_path, new_path, ignore, with_libtorch, config] {
           const vd::LibTorchInspector fallback = libtorch_fallback(*with_libtorch);
           const vd::SideKind kind =
               *config ? vd::SideKind::configuration : vd::SideKind::by_content;
           const vd::RecordSet old_set = vd::load_record_set(*old_path, fallback, kind);
           const vd::RecordSet new_set = vd::load_record_set(*new_path, fallback, kind);
           const vd::RecordDiff diff = vd::diff_records(old_set, new_set, *ignore);
           emit(common,
                format_records(*new_path,
                               [&](std::ostream& out) {
                                 vd::write_diff(out, old_set, new_set, diff.changes, diff.compared,
                                                vd::parse_output_format(common.format));
                               }),
                {*old_path, *new_path});
           return diff.changes.empty() ? 0 : 1;
         };
       },
       2},
  };
}

std::string help_footer(const std::vector<Command>& cmds) {
  std::string text = "Examples:\n";
  for (const auto& c : cmds) text += std::string("  ") + c.example + "\n";
  text +=
      "\nExit status: 0 success, 1 bad or unreadable input, 2 usage error, 3 a non-finite tensor\n"
      "(capture --fail-on-nonfinite); diff: 0 identical, 1 different, 2 usage error or\n"
      "unreadable input.\n"
      "See vin-inspect(1) for the record formats.";
  return text;
}

void configure_logging(const std::string& level) {
  auto logger = spdlog::stderr_logger_mt(kProgram);
  logger->set_pattern("vin-inspect: %l: %v");
  spdlog::set_default_logger(logger);
  spdlog::set_level(spdlog::level::from_str(level));
}

// Usage errors: the message, a suggestion where one helps, and how to get help.
int usage_error(const std::string& message) {
  std::cerr << kProgram << ": error: " << vd::printable(message, 2000) << "\n"
            << "Run 'vin-inspect --help' for usage.\n";
  return 2;
}

std::string unknown_command_hint(const std::vector<Command>& cmds, int argc, char** argv) {
  std::vector<std::string> names;
  for (const auto& c : cmds) {
    names.emplace_back(c.name);
    if (c.alias) names.emplace_back(c.alias);
  }
  // the first word that is neither an option nor an option's value is meant as the subcommand
  for (int i = 1; i < argc; ++i) {
    const std::string word = argv[i];
    if (word == "--log-level") {
      ++i;
      continue;
    }
    if (word.empty() || word[0] == '-') continue;
    if (std::find(names.begin(), names.end(), word) != names.end()) return "";
    const auto near = vd::closest_matches(word, names, 1);
    std::string hint = "unknown subcommand '" + word + "'";
    if (!near.empty()) hint += "; did you mean '" + near.front() + "'?";
    return hint;
  }
  return "";
}

// An option the chosen subcommand does not have ("--input" for "--inputs"), named with the
// closest valid one: CLI11 would first report a required option as missing, which misleads.
std::string unknown_option_hint(CLI::App& app, int argc, char** argv) {
  CLI::App* sub = nullptr;
  std::vector<std::string> known;
  std::unordered_map<std::string, bool> takes_value;
  const auto learn = [&](CLI::App& from) {
    for (const CLI::Option* opt : from.get_options()) {
      for (const auto& n : opt->get_lnames()) {
        known.push_back("--" + n);
        takes_value["--" + n] = opt->get_type_size_max() > 0;
      }
      for (const auto& n : opt->get_snames()) {
        known.push_back("-" + n);
        takes_value["-" + n] = opt->get_type_size_max() > 0;
      }
    }
  };
  learn(app);
  for (int i = 1; i < argc; ++i) {
    const std::string word = argv[i];
    if (word == "--") break;
    const bool is_number =
        word.size() > 1 && (std::isdigit(static_cast<unsigned char>(word[1])) || word[1] == '.');
    if (word.size() > 1 && word[0] == '-' && !is_number) {
      const std::string name = word.substr(0, word.find('='));
      const auto it = takes_value.find(name);
      if (it == takes_value.end()) {
        std::string hint = "unknown option '" + name + "'";
        const auto near = vd::closest_matches(name, known, 1);
        if (!near.empty()) hint += "; did you mean '" + near.front() + "'?";
        return hint;
      }
      if (it->second && word.find('=') == std::string::npos) ++i;  // its value
      continue;
    }
    if (!sub) {
      for (CLI::App* candidate : app.get_subcommands({}))
        if (candidate->check_name(word)) sub = candidate;
      if (sub) learn(*sub);
    }
  }
  return "";
}

}  // namespace

int run_command(const std::function<int()>& action, int error_status,
                const std::vector<std::string>& arguments);

// Ends the process once a command is done: its output is written and its files closed (the
// command's own scope has ended), so only the streams are flushed; the static destructors and the
// finalizers of LibTorch's libraries (about 60 ms after a capture, freeing only what the system
// frees anyway) are skipped. Sanitizer builds exit normally, for LeakSanitizer's check.
int leave(int status) {
  std::cout.flush();
  std::cerr.flush();
  if (auto logger = spdlog::default_logger()) logger->flush();
  std::fflush(nullptr);
#if defined(__SANITIZE_ADDRESS__) || defined(VIN_SANITIZED)
  left_to_the_exit().clear();  // destroyed while the plugin that made them is loaded
  return status;
#else
  std::_Exit(status);
#endif
}

int main(int argc, char** argv) {
  // libzip converts each member's DOS time with mktime(), and without TZ glibc stats
  // /etc/localtime on every call: 10,000 stats for an archive of 3,400 members, a third of
  // inspect-model's time. The same zone, named, is read once. (No output shows a local time.)
  setenv("TZ", ":/etc/localtime", /*overwrite=*/0);
  CommonOptions common;
  const std::vector<Command> cmds = commands(common);

  CLI::App app{"vin-inspect: inspect PyTorch TorchScript archives as machine-readable records",
               kProgram};
  app.set_version_flag("--version", std::string(kProgram) + " " VIN_VERSION +
                                        (VIN_WITH_TORCH ? " (LibTorch " VIN_LIBTORCH_VERSION ")"
                                                        : " (built without LibTorch)"));
  std::string log_level = "warn";
  app.add_option("--log-level", log_level, "Log level on stderr (default warn)")
      ->check(CLI::IsMember({"trace", "debug", "info", "warn", "error", "off"}));
  app.require_subcommand(1);
  app.fallthrough();
  // before the subcommands are added: each takes its parent's formatter
  app.formatter(std::make_shared<vin::cli::HelpFormatter>());
  app.footer(help_footer(cmds));

  std::vector<std::function<int()>> actions(cmds.size());
  for (std::size_t i = 0; i < cmds.size(); ++i) {
    CLI::App* sub = app.add_subcommand(cmds[i].name, cmds[i].summary);
    if (cmds[i].alias) sub->alias(cmds[i].alias);
    sub->footer(std::string("Example: ") + cmds[i].example);
    cmds[i].define(*sub, actions[i]);
  }

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == static_cast<int>(CLI::ExitCodes::Success)) return app.exit(e);
    std::string hint = unknown_command_hint(cmds, argc, argv);
    if (hint.empty()) hint = unknown_option_hint(app, argc, argv);
    return usage_error(hint.empty() ? e.what() : hint);
  }

  configure_logging(log_level);
  std::size_t chosen = 0;
  while (chosen < cmds.size() && !app.got_subcommand(cmds[chosen].name)) ++chosen;
  if (chosen == cmds.size()) return 0;
  return leave(run_command(actions[chosen], cmds[chosen].error_status,
                           std::vector<std::string>(argv + 1, argv + argc)));
}

// An error message as it goes to the terminal: control characters and invalid UTF-8 escaped in
// each line, and first in every command-line argument it quotes (a file name holding a newline
// would otherwise start a line of its own, which could pass for another message).
std::string terminal_message(std::string message, const std::vector<std::string>& arguments) {
  for (const std::string& argument : arguments) {
    const std::string safe = vd::printable(argument, argument.size() * 4 + 4);
    if (safe == argument || argument.empty()) continue;
    for (std::size_t at = message.find(argument); at != std::string::npos;
         at = message.find(argument, at + safe.size()))
      message.replace(at, argument.size(), safe);
  }
  return vd::printable_lines(message);
}

int run_command(const std::function<int()>& action, int error_status,
                const std::vector<std::string>& arguments) {
  try {
    return action();
  } catch (const vd::UsageError& e) {
    return usage_error(e.what());
  } catch (const vd::OutputClosed&) {
    return error_status;  // the reader of stdout went away: end quietly, as Unix tools do
  } catch (const vd::Error& e) {
    // one line, or two where the library adds one (a forward failure's source position)
    std::cerr << kProgram << ": error: " << terminal_message(e.what(), arguments) << "\n";
    return error_status;
  } catch (const std::bad_alloc&) {
    // the library names the file and stage where it can (naming_out_of_memory); this is the
    // last resort
    std::cerr << kProgram << ": error: out of memory\n";
    return error_status;
  } catch (const std::exception& e) {
    // anything else is a defect of ours; still one line, no backtrace
    const std::string what = e.what();
    std::cerr << kProgram << ": error: " << vd::printable(what.substr(0, what.find('\n'))) << "\n";
    return error_status;
  }
}
