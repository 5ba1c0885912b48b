#include "options.h"

#include <sys/ioctl.h>
#include <unistd.h>

#include <cstdlib>

#include "torch_access.h"
#include "vin/diagnostics/records/error.h"
#include "vin/diagnostics/text/printable.h"

namespace vd = vin::diagnostics;

namespace vin::cli {
namespace {

// what an integer in [low, high] is called in help and errors
std::string integer_words(std::int64_t low, std::int64_t high) {
  if (low == 1 && high == kNoUpperBound) return "a positive integer";
  return "an integer in [" + std::to_string(low) + ", " + std::to_string(high) + "]";
}

std::string refusal(const std::string& what, const std::string& text) {
  return "must be " + what + ", got '" + vd::printable(text, 100) + "'";
}

}  // namespace

namespace {

// An integer's text within [low, high], else add_integer's refusal.
CLI::Validator integer_within(std::int64_t low, std::int64_t high) {
  const std::string words = integer_words(low, high);
  return CLI::Validator(
      [=](std::string& text) -> std::string {
        try {
          std::size_t used = 0;
          const long long parsed = std::stoll(text, &used);
          if (used == text.size() && parsed >= low && parsed <= high) return "";
        } catch (const std::exception&) {
        }
        return refusal(words, text);
      },
      high == kNoUpperBound && low == 1
          ? std::string("N > 0")
          : "[" + std::to_string(low) + ", " + std::to_string(high) + "]");
}

}  // namespace

std::size_t OutputOptions::table_width(std::size_t otherwise) const {
  if (const char* columns = std::getenv("COLUMNS")) {
    char* end = nullptr;
    const long value = std::strtol(columns, &end, 10);
    if (end != columns && *end == '\0' && value >= 20 && value <= 10000)
      return static_cast<std::size_t>(value);
  }
  winsize size{};
  if (!output && isatty(STDOUT_FILENO) == 1 && ioctl(STDOUT_FILENO, TIOCGWINSZ, &size) == 0 &&
      size.ws_col >= 20)
    return size.ws_col;
  return otherwise;
}

CLI::Option* add_integer(CLI::App& sub, const std::string& flag, std::int64_t& value,
                         std::int64_t low, std::int64_t high, const std::string& help) {
  return sub.add_option(flag, value, help + " (default " + std::to_string(value) + ")")
      ->type_name("N")
      ->check(integer_within(low, high));
}

CLI::Option* add_integer(CLI::App& sub, const std::string& flag,
                         std::optional<std::int64_t>& value, std::int64_t low, std::int64_t high,
                         const std::string& help, const std::string& unset) {
  return sub
      .add_option_function<std::int64_t>(
          flag, [&value](const std::int64_t& given) { value = given; },
          help + " (default: " + unset + ")")
      ->type_name("N")
      ->check(integer_within(low, high));
}

CLI::Validator number_within(double low, bool low_open, double high, const std::string& what) {
  return CLI::Validator(
      [=](std::string& text) -> std::string {
        try {
          std::size_t used = 0;
          const double value = std::stod(text, &used);
          if (used == text.size() && std::isfinite(value) &&
              (low_open ? value > low : value >= low) && value <= high)
            return "";
        } catch (const std::exception&) {
        }
        return refusal(what, text);
      },
      what);
}

void OutputOptions::add(CLI::App& sub, bool markdown) {
  if (markdown)
    sub.add_option("--format", format,
                   "Output format: jsonl (default), json, table or markdown (a summary line and "
                   "one GitHub-flavoured table, for a CI step summary or a review note)")
        ->check(CLI::IsMember({"jsonl", "json", "table", "markdown"}));
  else
    sub.add_option("--format", format, "Output format: jsonl (default), json or table")
        ->check(CLI::IsMember({"jsonl", "json", "table"}));
  sub.add_option("-o,--output", output, "Write the records to FILE instead of stdout")
      ->type_name("FILE");
}

void add_device(CLI::App& sub, const std::string& flag, std::string& device,
                const std::string& help) {
  sub.add_option(flag, device, help)->type_name("DEVICE");
}

void add_modules(CLI::App& sub, std::vector<std::string>& modules, const std::string& help) {
  sub.add_option("--module", modules, help)->type_name("PATH");
}

std::optional<std::vector<std::string>> selected_modules(const std::vector<std::string>& given) {
  if (given.empty()) return std::nullopt;
  return given;
}

void add_walk_limits(CLI::App& sub, std::int64_t& max_nodes, std::int64_t& max_depth) {
  add_integer(sub, "--max-traversal-nodes", max_nodes, 1, kNoUpperBound,
              "Nodes visited per input/output walk");
  add_integer(sub, "--max-container-depth", max_depth, 1, kNoUpperBound,
              "Container edges followed per walk");
}

std::vector<diagnostics::NamedPath> RunOptions::named_inputs(
    std::vector<diagnostics::NamedPath> archives) const {
  std::vector<diagnostics::NamedPath> named;
  for (const std::string& file : inputs) named.push_back({"--inputs", file});
  named.insert(named.end(), archives.begin(), archives.end());
  return named;
}

void RunOptions::add(CLI::App& sub, const std::string& inputs_help,
                     const std::string& timeout_help) {
  auto* files = sub.add_option("--inputs", inputs, inputs_help)->type_name("FILE");
  auto* shape = sub.add_option("--shape", shapes,
                               "Make forward's argument NAME instead of reading --inputs: "
                               "NAME=1x3x224x224[:DTYPE] (repeatable; torch.randn, or "
                               "torch.randint for integer dtypes, after torch.manual_seed)")
                    ->type_name("NAME=DIMS[:DTYPE]");
  files->excludes(shape);
  sub.add_option(
         "--seed", seed,
         "torch.manual_seed(N) before --shape's tensors are made; every forward starts from the "
         "generator's state after them (default " +
             seed + ")")
      ->type_name("N")
      ->check(CLI::Validator(
          [](std::string& text) -> std::string {
            try {
              vd::parse_seed(text);
              return "";
            } catch (const vd::UsageError&) {
              return refusal(
                  "an integer in [-9223372036854775808, 18446744073709551615] (as "
                  "torch.manual_seed)",
                  text);
            }
          },
          "SEED"));
  add_integer(sub, "--int-high", shaped.int_high, 1, kNoUpperBound,
              "Integer --shape tensors are drawn from [0, N)");
  sub.add_flag("--eval", eval, "Switch every module to eval mode first");
  sub.add_option("--quantized-engine", quantized_engine,
                 "Backend of quantized operators: qnnpack, fbgemm, onednn or x86, as "
                 "torch.backends.quantized.engine (default: LibTorch's)")
      ->type_name("ENGINE")
      ->check(CLI::IsMember({"qnnpack", "fbgemm", "onednn", "x86"}));
  sub.add_option("--timeout", timeout_seconds,
                 "Stop a forward that runs longer than SECONDS; " + timeout_help)
      ->type_name("SECONDS")
      ->check(number_within(0, true, vd::kMaxTimeoutSeconds,
                            "a number of seconds above 0 and at most " +
                                std::to_string(static_cast<long long>(vd::kMaxTimeoutSeconds))));
  add_load_library(sub);
}

std::optional<vd::ShapedInputs> RunOptions::shaped_inputs(bool required, bool allocated) const {
  if (shapes.empty()) {
    if (inputs.empty() && required)
      throw vd::UsageError("--inputs FILE or --shape NAME=DIMS is required");
    return std::nullopt;
  }
  vd::ShapedInputs out = shaped;
  for (const auto& text : shapes) out.shapes.push_back(vd::parse_shape_spec(text));
  vd::check_shaped_inputs(out, allocated);
  return out;
}

void RunOptions::apply_to(vd::ForwardRun& run, bool inputs_required) const {
  run.inputs = inputs;
  // the meta device holds no values: its tensors take no memory, and no byte bound applies
  const bool on_meta = run.device == "meta" || run.device.rfind("meta:", 0) == 0;
  run.shaped = shaped_inputs(inputs_required, !on_meta);
  run.seed = vd::parse_seed(seed);
  run.eval = eval;
  run.quantized_engine = quantized_engine;
  run.timeout_seconds = timeout_seconds;
}

}  // namespace vin::cli
