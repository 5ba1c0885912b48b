// Every file a command writes, planned once before anything runs (contract 9.1; docs/cli.md,
// Outputs). A command names its inputs (the files it reads, the libraries it loads) and its
// outputs (the records, `-o`; `--save`; `--trace`; ...); OutputPlan resolves them all, however
// spelled (relative or absolute, through a link, not existing yet), and refuses as a usage error
// naming both an output that is an input or another output, an empty name, and more than one
// output on standard output. Each file output is then staged: written under a hidden name beside
// its target, renamed over it by commit() once the whole command has succeeded; a plan destroyed
// without a commit (the command failed) removes what it staged, so a failed command leaves none of
// its new files and every old one as it was.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "vin/diagnostics/output/output_sink.h"

namespace vin::diagnostics {

/// A file a command reads or writes, with what names it on the command line ("--save",
/// "ARCHIVE", "-o"): the words its refusals use.
struct NamedPath {
  std::string option;
  std::string path;
};

class OutputPlan {
 public:
  /// One output: `path` nothing means standard output by default (the records without `-o`);
  /// "-" is standard output; "" is a usage error.
  struct Output {
    std::string option;
    std::optional<std::string> path;
  };

  /// Resolves and checks every output against the inputs and each other, then stages each
  /// file output. Throws UsageError (exit 2) for a collision, an empty name or two outputs on
  /// standard output; Error naming the file when it cannot be written (a folder, no such folder,
  /// no permission), before anything runs.
  OutputPlan(const std::vector<NamedPath>& inputs, const std::vector<Output>& outputs);
  /// Removes whatever was staged and not committed.
  ~OutputPlan();
  OutputPlan(OutputPlan&&) noexcept = default;
  OutputPlan(const OutputPlan&) = delete;
  OutputPlan& operator=(const OutputPlan&) = delete;
  OutputPlan& operator=(OutputPlan&&) = delete;

  /// Where the output named `option` is to be written: its staging file (a regular file, or one
  /// that does not exist yet), the target itself (an existing device or FIFO), or "-" for
  /// standard output, with the target's name for messages. Every writer (write_output,
  /// OutputFile, NpzWriter) takes it and writes it in place.
  PlannedOutput destination(const std::string& option) const;
  /// The file the user named for the output `option` ("-" for standard output): what messages
  /// about it say (writers take it as their `shown` name).
  const std::string& target(const std::string& option) const;
  /// Whether the output named `option` goes to standard output.
  bool to_standard_output(const std::string& option) const;

  /// Renames every staged file over its target, in the order the outputs were given: the
  /// command succeeded. Throws Error naming the target a rename fails for.
  void commit();
  /// Removes every staged file now (a failure reported from another thread, before the process
  /// ends without unwinding); safe to call more than once.
  void discard() noexcept;

 private:
  struct Planned {
    std::string option;
    std::string target;       // as given ("-" for standard output)
    std::string destination;  // what writers write to
    std::string final_path;   // what the staged file is renamed to; "" when written in place
  };
  std::vector<Planned> planned_;
};

}  // namespace vin::diagnostics
