// vin-inspect: parses the command line and runs the one subcommand asked for (commands/*.cpp,
// each with its options and its call into the library). Errors from the library arrive as
// exceptions and are reported here, once: the one place errors become messages and exit statuses.
#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <memory>
#include <unordered_map>

#include "command.h"
#include "help_format.h"
#include "vin/diagnostics/output/output_sink.h"
#include "vin/diagnostics/records/error.h"
#include "vin/diagnostics/text/printable.h"
#include "vin/diagnostics/text/suggest.h"

namespace vd = vin::diagnostics;

namespace vin::cli {

std::vector<std::unique_ptr<Command>> all_commands() {
  std::vector<std::unique_ptr<Command>> commands;
  commands.push_back(inspect_config_command());
  commands.push_back(inspect_model_command());
  commands.push_back(capture_command());
  commands.push_back(profile_command());
  commands.push_back(compare_command());
  commands.push_back(diff_command());
  commands.push_back(report_command());
  commands.push_back(scan_command());
  return commands;
}

// What a command hands over to be destroyed by the process's end (a model's teardown is work no
// one waits for: 0.45 s for 5,000 modules); leave() ends the process without destroying it.
std::vector<std::shared_ptr<void>>& left_to_the_exit() {
  static std::vector<std::shared_ptr<void>> kept;
  return kept;
}

}  // namespace vin::cli

namespace {

using vin::cli::Command;

constexpr const char* kProgram = "vin-inspect";

std::string help_footer(const std::vector<std::unique_ptr<Command>>& commands) {
  std::string text = "Examples:\n";
  for (const auto& c : commands) text += std::string("  ") + c->info().example + "\n";
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

std::string unknown_command_hint(const std::vector<std::unique_ptr<Command>>& commands, int argc,
                                 char** argv) {
  std::vector<std::string> names;
  for (const auto& c : commands) {
    names.emplace_back(c->info().name);
    if (c->info().alias) names.emplace_back(c->info().alias);
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

// The status of `print` (--help or --version) once what it wrote to stdout is out; a write that
// failed (a full device, a closed pipe) is an error naming stdout, as for every command's records.
template <class Print>
int help_written(Print print) {
  errno = 0;
  const int status = print();
  std::cout.flush();
  if (std::cout) return status;
  const int error = errno;
  std::cerr << kProgram << ": error: standard output: write failed"
            << (error ? std::string(": ") + std::strerror(error) : std::string()) << "\n";
  return 1;
}

}  // namespace

int run_command(Command& command, const std::vector<std::string>& arguments);

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
  vin::cli::left_to_the_exit().clear();  // destroyed while the plugin that made them is loaded
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
  const std::vector<std::unique_ptr<Command>> commands = vin::cli::all_commands();

  CLI::App app{"vin-inspect: describe PyTorch model files (TorchScript and .pt2 archives, state "
               "dicts, checkpoints, safetensors) as machine-readable records",
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
  app.footer(help_footer(commands));
  for (const auto& command : commands) {
    CLI::App* sub = app.add_subcommand(command->info().name, command->info().summary);
    if (command->info().alias) sub->alias(command->info().alias);
    sub->footer(std::string("Example: ") + command->info().example);
    command->define(*sub);
  }

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == static_cast<int>(CLI::ExitCodes::Success))
      return help_written([&] { return app.exit(e); });  // --help, --version
    std::string hint = unknown_command_hint(commands, argc, argv);
    if (hint.empty()) hint = unknown_option_hint(app, argc, argv);
    return usage_error(hint.empty() ? e.what() : hint);
  }

  configure_logging(log_level);
  for (const auto& command : commands)
    if (app.got_subcommand(command->info().name))
      return leave(run_command(*command, std::vector<std::string>(argv + 1, argv + argc)));
  return 0;
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

int run_command(Command& command, const std::vector<std::string>& arguments) {
  const int error_status = command.info().error_status;
  try {
    return command.run();
  } catch (const vd::UsageError& e) {
    return usage_error(e.what());
  } catch (const vd::NotRunnable& e) {
    // exit 1 even for compare, whose 1 otherwise says "different" (contract 10.3); no records
    // are written, so a script tells the two apart by an empty stdout
    std::cerr << kProgram << ": error: " << terminal_message(e.what(), arguments) << "\n";
    return 1;
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
