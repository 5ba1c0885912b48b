// A subcommand of vin-inspect, as one unit: its name, alias, summary and example (for --help, the
// man page and the README, which tests/cli checks against them), its options and the one call
// into the library. Each lives in its own file under commands/ with its options beside it, as
// git keeps each command in one builtin/*.c; main.cpp only dispatches.
#pragma once

#include <CLI/CLI.hpp>

#include <memory>
#include <vector>

namespace vin::cli {

struct CommandInfo {
  const char* name;
  const char* alias;  ///< or nullptr
  const char* summary;
  const char* example;
  /// the exit status for unreadable input or a failed write: 1, or 2 where 1 means "different"
  /// (diff, compare: as diff(1))
  int error_status = 1;
};

class Command {
 public:
  explicit Command(CommandInfo info) : info_(info) {}
  virtual ~Command() = default;
  Command(const Command&) = delete;
  Command& operator=(const Command&) = delete;

  const CommandInfo& info() const { return info_; }
  /// Adds the command's options to its subcommand; the values land in the command's members.
  virtual void define(CLI::App& sub) = 0;
  /// Runs the command once its options are parsed; returns the exit status. Errors are thrown
  /// (vin::diagnostics::Error, UsageError) and reported by main, once.
  virtual int run() = 0;

 private:
  CommandInfo info_;
};

/// Every subcommand, in the order --help lists them (commands/*.cpp).
std::vector<std::unique_ptr<Command>> all_commands();

std::unique_ptr<Command> inspect_config_command();
std::unique_ptr<Command> inspect_model_command();
std::unique_ptr<Command> capture_command();
std::unique_ptr<Command> profile_command();
std::unique_ptr<Command> compare_command();
std::unique_ptr<Command> diff_command();
std::unique_ptr<Command> report_command();
std::unique_ptr<Command> scan_command();

}  // namespace vin::cli
