// The option groups the subcommands share, each declared once with its name, default, check and
// help text: the output (--format, -o), the run of an archive's forward (--inputs or --shape with
// --seed and --int-high, --eval, --quantized-engine, --timeout, --load-library), a device, module
// patterns, and bounded integers (the capture quotas, profile's --warmup and --runs, ...), whose
// help states the default from the value they are bound to, so that a default is written once.
// tests/cli checks the man page and the README against --help.
#pragma once

#include <CLI/CLI.hpp>

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "vin/diagnostics/capture/capture_request.h"
#include "vin/diagnostics/output/output_format.h"
#include "vin/diagnostics/output/output_plan.h"
#include "vin/diagnostics/text/shape_spec.h"

namespace vin::cli {

inline constexpr std::int64_t kNoUpperBound = std::numeric_limits<std::int64_t>::max();

/// An integer option checked as text before anything runs, within [low, high]; else the usage
/// error "FLAG: must be WORDS, got 'TEXT'" (WORDS: "a positive integer" for [1, no bound], else
/// "an integer in [LOW, HIGH]"). Its help ends with "(default V)", V the value's initial value.
CLI::Option* add_integer(CLI::App& sub, const std::string& flag, std::int64_t& value,
                         std::int64_t low, std::int64_t high, const std::string& help);

/// The same for an option with no value by default: its help ends with "(default: UNSET)".
CLI::Option* add_integer(CLI::App& sub, const std::string& flag,
                         std::optional<std::int64_t>& value, std::int64_t low, std::int64_t high,
                         const std::string& help, const std::string& unset);

/// A number option checked as text: finite, within [low, high] (`low` excluded when
/// `low_open`); else "FLAG: must be WHAT, got 'TEXT'" (CLI11's own range validators print the
/// bounds of a double in full).
CLI::Validator number_within(double low, bool low_open, double high, const std::string& what);

/// --format and -o, which every subcommand has.
struct OutputOptions {
  std::string format = "jsonl";
  std::optional<std::string> output;  ///< nothing: standard output

  /// `markdown`: whether the command writes Markdown too (diff's --format markdown)
  void add(CLI::App& sub, bool markdown = false);
  diagnostics::OutputFormat parsed_format() const {
    return diagnostics::parse_output_format(format);
  }
  /// The width a table fits: COLUMNS where set (20 to 10,000), else the terminal's when the
  /// records go to one, else `otherwise`.
  std::size_t table_width(std::size_t otherwise) const;
};

/// --device (or --device-a, ...): where an archive is loaded and its inputs placed.
void add_device(CLI::App& sub, const std::string& flag, std::string& device,
                const std::string& help);

/// --module PATH|PATTERN (repeatable); nothing given leaves `modules` empty (every module).
void add_modules(CLI::App& sub, std::vector<std::string>& modules, const std::string& help);
/// The --module values as the requests take them: nothing for every module.
std::optional<std::vector<std::string>> selected_modules(const std::vector<std::string>& given);

/// --max-traversal-nodes and --max-container-depth: the bounds of one input or output walk
/// (capture and compare walk alike).
void add_walk_limits(CLI::App& sub, std::int64_t& max_nodes, std::int64_t& max_depth);

/// The options of every command that runs an archive's forward (capture, compare, profile), in
/// one place so that the commands cannot drift apart.
struct RunOptions {
  std::vector<std::string> inputs;
  std::vector<std::string> shapes;   // --shape texts, parsed by shaped_inputs()
  std::string seed = "0";            // --seed text, parsed by apply_to() as torch.manual_seed does
  diagnostics::ShapedInputs shaped;  // --int-high
  bool eval = false;
  std::optional<std::string> quantized_engine;
  std::optional<double> timeout_seconds;

  /// `timeout_help`: what happens to the records of a forward stopped by --timeout.
  void add(CLI::App& sub, const std::string& inputs_help,
           const std::string& timeout_help = "the records so far are printed, then an error");
  /// The --shape inputs, when given; a usage error when neither they nor --inputs are and
  /// `required` (compare asks only when a side is an archive, which the plugin tells).
  std::optional<diagnostics::ShapedInputs> shaped_inputs(bool required = true,
                                                         bool allocated = true) const;
  /// What the options say of a run (its archive and device are the command's).
  void apply_to(diagnostics::ForwardRun& run, bool inputs_required = true) const;
  /// The files the run reads, as the output plan names them: each --inputs file, then
  /// `archives` ({"ARCHIVE", path}, compare's "A" and "B").
  std::vector<diagnostics::NamedPath> named_inputs(
      std::vector<diagnostics::NamedPath> archives) const;
};

}  // namespace vin::cli
