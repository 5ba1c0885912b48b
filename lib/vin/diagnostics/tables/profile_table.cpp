// profile's table: the module tree with shapes, parameters, FLOPs, times and memory, the
// operators that took the most time, the latency and the totals.
#include "vin/diagnostics/tables/command_tables.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <limits>
#include <string_view>
#include <unordered_map>
#include <variant>

#include "vin/diagnostics/json/json_encoding.h"
#include "vin/diagnostics/tables/table_parts.h"
#include "vin/diagnostics/tables/table_views.h"
#include "vin/diagnostics/tables/text_table.h"
#include "vin/diagnostics/text/printable.h"

namespace vin::diagnostics {

using namespace tables_detail;

namespace {

constexpr const char* kSiUnits[] = {"K", "M", "G", "T", "P", "E", "Z", "Y", "R", "Q"};

std::string with_si_unit(long double scaled) {
  std::size_t unit = 0;
  while ((scaled >= 1000 || scaled <= -1000) && unit + 1 < std::size(kSiUnits)) {
    scaled /= 1000;
    ++unit;
  }
  char text[64];
  std::snprintf(text, sizeof text, "%.2Lf %s", scaled, kSiUnits[unit]);
  return text;
}

// "1,234,567" for a count of FLOPs, "overflow" past 2^127
std::string flops_with_separators(FlopCount value) {
  return flops_overflowed(value) ? "overflow" : digits_with_separators(flop_digits(value));
}

}  // namespace

std::string si_count(std::int64_t value) {
  if (value < 1000 && value > -1000) return std::to_string(value);
  return with_si_unit(static_cast<long double>(value) / 1000);
}

std::string si_count(FlopCount value) {
  if (flops_overflowed(value)) return "overflow";
  if (value < 1000) return std::to_string(static_cast<int>(value));
  return with_si_unit(static_cast<long double>(value) / 1000);
}

namespace {

std::string milliseconds(double ms) {
  char text[32];
  std::snprintf(text, sizeof text, ms < 10 ? "%.3f" : ms < 1000 ? "%.2f" : "%.1f", ms);
  return text;
}

std::string share_of(double part, double whole) {
  if (whole <= 0) return "";
  char text[32];
  std::snprintf(text, sizeof text, "%.1f%%", 100 * part / whole);
  return text;
}

// "[2, 10]" for one tensor, "[2, 10], [2]" for several, "-" for none; long lists cut short.
std::string shapes_text(const std::vector<std::vector<std::int64_t>>& shapes) {
  constexpr std::size_t kMaxWidth = 40;
  if (shapes.empty()) return "-";
  std::string out;
  for (std::size_t i = 0; i < shapes.size(); ++i) {
    std::string one = "[";
    for (std::size_t d = 0; d < shapes[i].size(); ++d)
      one += (d ? ", " : "") + std::to_string(shapes[i][d]);
    one += "]";
    if (i > 0 && out.size() + one.size() + 2 > kMaxWidth)
      return out + ", ... (" + std::to_string(shapes.size()) + " tensors)";
    out += (i ? ", " : "") + one;
  }
  return out;
}

// a profile's time or memory cell where the run measured none (the meta device)
const std::string kNotMeasured = "-";

}  // namespace

namespace {

// 113017344 -> "113M", 10840000 -> "10.8M", 903168 -> "903K", 512 -> "512": three significant
// digits, the unit without a space, for the module table's narrow FLOPs column
std::string si_compact(FlopCount value) {
  if (flops_overflowed(value)) return "overflow";
  if (value < 1000) return std::to_string(static_cast<int>(value));
  const char* units[] = {"K", "M", "G", "T", "P", "E", "Z", "Y", "R", "Q"};
  long double scaled = static_cast<long double>(value) / 1000;
  std::size_t unit = 0;
  while (scaled >= 999.5L && unit + 1 < std::size(units)) {
    scaled /= 1000;
    ++unit;
  }
  char text[64];
  std::snprintf(text, sizeof text, scaled < 9.995L ? "%.2Lf%s" : scaled < 99.95L ? "%.1Lf%s" : "%.0Lf%s",
                scaled, units[unit]);
  return text;
}

// `text` (one line) broken at spaces into lines of at most `width` columns where it can be, the
// lines after the first indented by two; each ends in a newline
std::string wrapped(const std::string& text, std::size_t width) {
  std::string out, line;
  std::size_t start = 0;
  while (start < text.size()) {
    auto space = text.find(' ', start);
    if (space == std::string::npos) space = text.size();
    const std::string word = text.substr(start, space - start);
    if (!line.empty() && display_width(line) + 1 + display_width(word) > width) {
      out += line + '\n';
      line = "  " + word;
    } else {
      line += (line.empty() ? "" : " ") + word;
    }
    start = space + 1;
  }
  return out + line + '\n';
}

// A module row's label ("    block_name (Type)") cut to `width`: its name first, so that the
// indentation and the type stay whole where they can ("    block... (Type)")
std::string cut_module_label(const std::string& label, std::size_t width) {
  const auto open = label.rfind(" (");
  const auto name_start = label.find_first_not_of(' ');
  if (open == std::string::npos || name_start == std::string::npos || open <= name_start)
    return cut_to(label, width);
  const std::string type = label.substr(open);  // " (Type)"
  const std::size_t room = width > display_width(type) ? width - display_width(type) : 0;
  if (room >= name_start + 4) return cut_to(label.substr(0, open), room) + type;
  return cut_to(label, width);
}

// the instrumented forward's time less what the instrumentation cost it: what the module and
// operator times (the overhead subtracted from them too) are shares of
double model_ms(const ProfileSummary& s) { return std::max(0.0, s.instrumented_ms - s.overhead.ms); }

// "torch.nn.modules.conv.Conv2d" -> "Conv2d": the table's type (the records keep it whole)
std::string short_type(const std::string& type) {
  const auto dot = type.rfind('.');
  return dot == std::string::npos ? type : type.substr(dot + 1);
}

// The module table's rows: those within --depth, each self time holding the time of the rows
// folded into it (so that the self times add up to the root's time); then why a row has no rows
// under it where its children did not run.
std::string profile_module_rows(const ProfileRecords& profile, const ProfileTableLayout& layout,
                                std::size_t& width) {
  const ProfileSummary& s = profile.summary;
  std::vector<std::string> paths;
  for (const auto& m : profile.modules) paths.push_back(m.module_path);
  const std::vector<TreeRow> tree = tree_of_rows(paths);
  const auto shown_row = [&](std::size_t i) {
    return !layout.depth || depth_of(paths[i]) <= static_cast<std::size_t>(*layout.depth);
  };
  std::vector<double> self_ms(profile.modules.size());
  std::size_t folded = 0;
  for (std::size_t i = 0; i < profile.modules.size(); ++i) {
    self_ms[i] += profile.modules[i].self_time_ms;
    if (shown_row(i)) continue;
    ++folded;
    const std::size_t up = tree[i].parent;
    if (up != SIZE_MAX && shown_row(up)) self_ms[up] += profile.modules[i].time_ms;
  }
  TextTable modules;
  add_view_columns(modules, table_view("profile"), [](std::string_view) { return true; });
  std::string notes;
  std::size_t noted = 0, unnoted = 0;
  for (std::size_t i = 0; i < profile.modules.size(); ++i) {
    if (!shown_row(i)) continue;
    const ModuleProfile& m = profile.modules[i];
    const auto time = [&](double ms) { return m.measured ? milliseconds(ms) : kNotMeasured; };
    modules.add_row({shown(indentation(tree[i].depth) + tree[i].name + " (" +
                           short_type(m.module_type) + ")"),
                     shapes_text(m.output_shapes), with_thousands_separators(m.parameters),
                     si_compact(m.flops), time(self_ms[i]), time(m.time_ms),
                     m.measured ? share_of(m.time_ms, model_ms(s)) : kNotMeasured,
                     m.measured ? byte_size(m.peak_bytes) : kNotMeasured});
    if (m.uncalled_children.empty()) continue;
    if (noted == kProfileTableNotes) {
      ++unnoted;
      continue;
    }
    ++noted;
    std::string names;
    for (const std::string& child : m.uncalled_children) names += (names.empty() ? "" : ", ") + child;
    std::string instead;
    for (const std::string& op : m.work_operators) instead += (instead.empty() ? "" : ", ") + op;
    notes += wrapped(shown("No rows under " + m.module_path + ": its forward did not call " +
                           names + (instead.empty() ? "" : " (it called " + instead + " itself)")),
                     layout.width);
  }
  if (unnoted)
    notes += wrapped("... and " + std::to_string(unnoted) +
                         " more modules with children not called (--format jsonl: "
                         "uncalled_children)",
                     layout.width);
  const std::size_t label_min = 24, shapes_min = 18;
  const std::size_t cut =
      modules.fit(layout.width, {{0, label_min, cut_module_label}, {1, shapes_min}});
  width = modules.width();
  const std::string rule(width, '=');
  std::string out = rule + '\n' + modules.render() + '\n' + rule + '\n';
  if (folded)
    out += std::to_string(folded) + (folded == 1 ? " module" : " modules") + " deeper than --depth " +
           std::to_string(*layout.depth) + " folded into their ancestors' self time\n";
  if (cut)
    out += wrapped(std::to_string(cut) + (cut == 1 ? " cell" : " cells") + " cut to fit " +
                       std::to_string(layout.width) +
                       " columns (COLUMNS widens the table; --format jsonl has them whole)",
                   layout.width);
  return out + notes;
}

}  // namespace

std::string format_profile_table(const ProfileRecords& profile, const ProfileTableLayout& layout) {
  const ProfileSummary& s = profile.summary;
  std::size_t module_width = 0;
  std::string out = profile_module_rows(profile, layout, module_width);

  TextTable operators;
  add_view_columns(operators, table_view("profile operators"),
                   [](std::string_view) { return true; });
  const std::size_t shown_operators = std::min(profile.operators.size(), kProfileTableOperators);
  for (std::size_t i = 0; i < shown_operators; ++i) {
    const OperatorProfile& o = profile.operators[i];
    const auto time = [&](double ms) { return o.measured ? milliseconds(ms) : kNotMeasured; };
    operators.add_row({shown(o.name), with_thousands_separators(o.calls), si_count(o.flops),
                       si_count(macs_of(o.flops)), time(o.self_time_ms), time(o.time_ms),
                       o.measured ? share_of(o.time_ms, model_ms(s)) : kNotMeasured});
  }
  const std::size_t operators_cut = operators.fit(layout.width, {{0, 24}});
  out += operators.render() + '\n';
  if (operators_cut)
    out += wrapped(std::to_string(operators_cut) +
                       (operators_cut == 1 ? " operator name" : " operator names") +
                       " cut to fit " + std::to_string(layout.width) +
                       " columns (--format jsonl has them whole)",
                   layout.width);
  if (profile.operators.size() > shown_operators)
    out += "... " + std::to_string(profile.operators.size() - shown_operators) +
           " more operators (--format jsonl lists them all)\n";
  if (s.nested_operators)
    out += "Operators: every call, those dispatched from another operator too "
           "(--nested-operators)\n";
  out += std::string(operators.width(), '-') + '\n';

  const LatencyStats& l = s.latency_ms;
  char throughput[32];
  std::snprintf(throughput, sizeof throughput, "%.1f", s.throughput);
  if (s.measured)
    out += "Latency on " + shown(s.device) + ": median " + milliseconds(l.median) + " ms (min " +
           milliseconds(l.min) + ", mean " + milliseconds(l.mean) + ", p90 " + milliseconds(l.p90) +
           ", max " + milliseconds(l.max) + ")\n  over " + std::to_string(s.runs) +
           (s.runs == 1 ? " run after " : " runs after ") + std::to_string(s.warmup) +
           " warm-up; " + throughput + " forwards/s\n";
  else
    out += "Latency on " + shown(s.device) +
           ": not measured (the device computes shapes, not values: FLOPs and shapes only)\n";
  // 2 FLOPs per multiply-add: MACs are half (what torchinfo calls mult-adds)
  out += "FLOPs per forward: " + si_count(s.flops) + " (" + flops_with_separators(s.flops) +
         "; MACs " + si_count(macs_of(s.flops)) + ": a multiply-add is 2 FLOPs, 1 MAC)\n";
  if (!s.uncounted_operators.empty()) {
    // the total is short of the forward's: say by which operators, in one sentence
    std::string names;
    for (const UncountedOperator& o : s.uncounted_operators)
      names += (names.empty() ? "" : ", ") + shown(o.name) + " x" + std::to_string(o.calls);
    out += wrapped("FLOPs incomplete: no rule counts " + names, layout.width);
  }
  if (s.measured)
    out += wrapped("Instrumented forward: " + milliseconds(s.instrumented_ms) + " ms (" +
                       milliseconds(s.overhead.ms) +
                       " ms of it the instrumentation's, off the times above), peak memory " +
                       byte_size(s.peak_bytes),
                   layout.width);
  out += "Parameters: " + byte_size(s.parameter_bytes) + ", buffers: " + byte_size(s.buffer_bytes) +
         "\n";
  return out;
}

}  // namespace vin::diagnostics
