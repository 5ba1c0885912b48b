// The layout of --help, the project's own: CLI11's default formatter changed between its
// versions (2.6 writes upper-case headings, aligns short and long names in columns, wraps and
// leaves trailing spaces), and --help is output users read, the README quotes and the tests
// check. This formatter writes the same text under CLI11 2.1 to 2.6: the description, a usage
// line, the option groups, the subcommands and the footer, names in a 30-column field.
#pragma once

#include <CLI/CLI.hpp>

#include <string>

namespace vin::cli {

class HelpFormatter : public CLI::FormatterBase {
 public:
  std::string make_help(const CLI::App* app, std::string name,
                        CLI::AppFormatMode mode) const override;
};

}  // namespace vin::cli
