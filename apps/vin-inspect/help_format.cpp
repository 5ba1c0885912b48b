#include "help_format.h"

#include <iomanip>
#include <sstream>
#include <vector>

namespace vin::cli {
namespace {

constexpr std::size_t kNameColumn = 30;
// CLI11's "as many values as given" (detail::expected_max_vector_size, 1 << 29 in every 2.x)
constexpr int kManyValues = 1 << 29;

// "  NAME" padded to the name column, then the description, its later lines indented to it
void write_entry(std::ostream& out, const std::string& name, const std::string& description) {
  const std::string shown = "  " + name;
  out << std::setw(static_cast<int>(kNameColumn)) << std::left << shown;
  if (!description.empty()) {
    if (shown.size() >= kNameColumn) out << "\n" << std::string(kNameColumn, ' ');
    for (const char c : description) {
      out.put(c);
      if (c == '\n') out << std::string(kNameColumn, ' ');
    }
  }
  out << "\n";
}

// what follows an option's names: its type, default, count, REQUIRED, Needs, Excludes
std::string option_details(const CLI::Option* opt) {
  std::ostringstream out;
  if (!opt->get_option_text().empty()) return " " + opt->get_option_text();
  if (opt->get_type_size() != 0) {
    if (!opt->get_type_name().empty()) out << " " << opt->get_type_name();
    if (!opt->get_default_str().empty()) out << "=" << opt->get_default_str();
    if (opt->get_expected_max() >= kManyValues)
      out << " ...";
    else if (opt->get_expected_min() > 1)
      out << " x " << opt->get_expected();
    if (opt->get_required()) out << " REQUIRED";
  }
  if (!opt->get_envname().empty()) out << " (Env:" << opt->get_envname() << ")";
  if (!opt->get_needs().empty()) {
    out << " Needs:";
    for (const CLI::Option* other : opt->get_needs()) out << " " << other->get_name();
  }
  if (!opt->get_excludes().empty()) {
    out << " Excludes:";
    for (const CLI::Option* other : opt->get_excludes()) out << " " << other->get_name();
  }
  return out.str();
}

std::string positional_usage(const CLI::Option* opt) {
  std::string usage = opt->get_name(true, false);
  if (opt->get_expected_max() >= kManyValues)
    usage += "...";
  else if (opt->get_expected_max() > 1)
    usage += "(" + std::to_string(opt->get_expected()) + "x)";
  return opt->get_required() ? usage : "[" + usage + "]";
}

void write_usage(std::ostream& out, const CLI::App* app, const std::string& name) {
  out << "Usage:" << (name.empty() ? "" : " ") << name;
  if (!app->get_options([](const CLI::Option* o) { return o->nonpositional(); }).empty())
    out << " [OPTIONS]";
  for (const CLI::Option* opt :
       app->get_options([](const CLI::Option* o) { return o->get_positional(); }))
    out << " " << positional_usage(opt);
  const auto subcommands = app->get_subcommands(
      [](const CLI::App* sub) { return !sub->get_disabled() && !sub->get_name().empty(); });
  if (!subcommands.empty()) {
    const bool optional = app->get_require_subcommand_min() == 0;
    const bool several =
        app->get_require_subcommand_max() >= 2 && app->get_require_subcommand_min() <= 1;
    out << " " << (optional ? "[" : "") << (several ? "SUBCOMMANDS" : "SUBCOMMAND")
        << (optional ? "]" : "");
  }
  out << "\n";
}

void write_options(std::ostream& out, const CLI::App* app) {
  const auto positionals = app->get_options(
      [](const CLI::Option* o) { return !o->get_group().empty() && o->get_positional(); });
  if (!positionals.empty()) {
    out << "\nPositionals:\n";
    for (const CLI::Option* opt : positionals)
      write_entry(out, opt->get_name(true, false) + option_details(opt), opt->get_description());
  }
  const std::vector<std::string> groups = app->get_groups();
  for (const std::string& group : groups) {
    const auto options = app->get_options(
        [&](const CLI::Option* o) { return o->get_group() == group && o->nonpositional(); });
    if (group.empty() || options.empty()) continue;
    // the group options land in unless told otherwise: "Options" until CLI11 2.5, then "OPTIONS"
    out << "\n" << (group == "OPTIONS" ? "Options" : group) << ":\n";
    for (const CLI::Option* opt : options)
      write_entry(out, opt->get_name(false, true) + option_details(opt), opt->get_description());
    if (group != groups.back()) out << "\n";
  }
}

void write_subcommands(std::ostream& out, const CLI::App* app) {
  const auto subcommands =
      app->get_subcommands([](const CLI::App* sub) { return !sub->get_name().empty(); });
  if (subcommands.empty()) return;
  out << "\nSubcommands:\n";
  for (const CLI::App* sub : subcommands)
    write_entry(out, sub->get_display_name(true), sub->get_description());
}

}  // namespace

std::string HelpFormatter::make_help(const CLI::App* app, std::string name,
                                     CLI::AppFormatMode /*mode*/) const {
  std::ostringstream out;
  if (!app->get_description().empty()) out << app->get_description() << "\n";
  write_usage(out, app, name);
  write_options(out, app);
  write_subcommands(out, app);
  out << "\n";
  if (!app->get_footer().empty()) out << app->get_footer() << "\n";
  return out.str();
}

}  // namespace vin::cli
