#include "vin/diagnostics/report/report_page.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <optional>
#include <unordered_map>

#include "vin/diagnostics/json/record_fields.h"
#include "vin/diagnostics/records/error.h"
#include "vin/diagnostics/report/html_embedding.h"
#include "vin/diagnostics/report/report_tree.h"
#include "vin/diagnostics/text/printable.h"

namespace vin::diagnostics {
namespace {

using Values = std::vector<std::optional<double>>;

// A model side's modules name their parameters as they hold them directly; the tree sums them
constexpr const char* kModelParameterField = "direct_parameters";

bool is_profile(const RecordSet& side) { return side.kind == RecordSet::Kind::profile; }

// A record value as the page's number: JSON numbers and integers of any size (FLOPs past 2^64);
// null, absent or anything else not known
std::optional<double> number_of(const Json& value) {
  if (is_big_integer(value)) return std::strtod(big_integer_digits(value).c_str(), nullptr);
  if (value.is_number()) return value.get<double>();
  return std::nullopt;
}

std::optional<double> field_number(const RecordList::Record& record, const char* field) {
  const FieldName name = field_name(field);
  if (!record.has(name)) return std::nullopt;
  return number_of(record.value(name));
}

std::string field_string(const RecordList::Record& record, const char* field) {
  const FieldName name = field_name(field);
  if (!record.has(name)) return {};
  const Json value = record.value(name);
  return value.is_string() ? value.get<std::string>() : std::string();
}

// Six significant digits: what a person reads, and a tenth of the bytes of a double's 17
Json page_number(std::optional<double> value) {
  if (!value || !std::isfinite(*value)) return nullptr;
  if (*value == std::floor(*value) && std::fabs(*value) < 9.0e15) return *value;
  char text[32];
  std::snprintf(text, sizeof text, "%.6g", *value);
  return std::strtod(text, nullptr);
}

// A value from a file as the page holds it: strings as report_text shows them, integers of
// any size as numbers
Json page_value(const Json& value) {
  if (value.is_string()) return report_text(value.get<std::string>());
  if (is_big_integer(value) || value.is_binary()) return page_number(number_of(value));
  if (value.is_number_float()) return page_number(value.get<double>());
  if (value.is_array()) {
    Json out = Json::array();
    for (const Json& item : value) out.push_back(page_value(item));
    return out;
  }
  if (value.is_object()) {
    Json out = Json::object();
    for (auto it = value.begin(); it != value.end(); ++it)
      out[report_text(it.key())] = page_value(it.value());
    return out;
  }
  return value;
}

const ReportMetric& metric_named(const std::string& name) {
  for (const ReportMetric& m : report_metrics())
    if (name == m.name) return m;
  throw UsageError("--metric: must be one of " + report_metric_names() + ", got '" +
                   printable(name) + "'");
}

// One side's records by node of the tree of both sides
struct Side {
  const RecordSet* records;
  std::vector<std::size_t> record_of;  // per node: the item's index, or kNone
  std::vector<bool> present;           // per node: it, or a module below it, has a record
};

std::string path_of(const RecordSet& side, std::size_t item) {
  return field_string(side.items[item], is_profile(side) ? "module_path" : "path");
}

// A node's value on a side: its record's, else (a container on this side) its children's sum;
// a model side's modules hold their parameters directly, so every node there adds its children
Values side_totals(const ModuleTree& tree, const Side& side, const ReportMetric& metric) {
  const bool profile = is_profile(*side.records);
  const char* field = profile ? metric.field : kModelParameterField;
  Values totals(tree.size());
  for (std::size_t i = tree.size(); i-- > 0;) {
    if (!side.present[i]) continue;
    std::optional<double> children;
    for (const std::size_t child : tree.node(i).children)
      if (totals[child]) children = children.value_or(0) + *totals[child];
    const std::size_t item = side.record_of[i];
    const std::optional<double> own =
        item == ModuleTree::kNone ? std::nullopt : field_number(side.records->items[item], field);
    if (profile)
      totals[i] = item != ModuleTree::kNone ? own : children;
    else if (own || children)
      totals[i] = own.value_or(0) + children.value_or(0);
  }
  return totals;
}

// The part of each node's value its children do not cover (0 where they cover it all or more:
// the page then scales them to fit and says why); none for a node without children, which has
// no "(self)" box (the whole of it is its own), nor for a value not known
Values self_values(const ModuleTree& tree, const Values& totals) {
  Values self(tree.size());
  for (std::size_t i = 0; i < tree.size(); ++i) {
    if (!totals[i] || tree.node(i).children.empty()) continue;
    double children = 0;
    for (const std::size_t child : tree.node(i).children) children += totals[child].value_or(0);
    self[i] = std::max(0.0, *totals[i] - children);
  }
  return self;
}

// The change of one value: 'g' grew, 's' shrank, '=' the same (or within --tolerance, or not
// known on a side), 'a' added, 'r' removed
char change_of(bool old_present, bool new_present, const std::optional<double>& old_value,
               const std::optional<double>& new_value, const DiffGate& gate, const char* field) {
  if (!old_present) return new_present ? 'a' : '=';
  if (!new_present) return 'r';
  if (!old_value || !new_value) return '=';
  if (const auto within = gate.within(field, Json(*old_value), Json(*new_value)); within)
    return *within ? '=' : (*new_value > *old_value ? 'g' : 's');
  if (*new_value == *old_value) return '=';
  return *new_value > *old_value ? 'g' : 's';
}

Json values_json(const Values& values) {
  Json out = Json::array();
  for (const auto& v : values) out.push_back(page_number(v));
  return out;
}

// The node rows: [path, parent, kind (0 a module, 1 a container), type, calls, input shapes,
// output shapes], their details from the NEW side's record where it has one
Json node_rows(const ModuleTree& tree, const std::vector<Side>& sides, Json& types) {
  std::unordered_map<std::string, std::size_t> type_index;
  Json rows = Json::array();
  for (std::size_t i = 0; i < tree.size(); ++i) {
    const ModuleTree::Node& node = tree.node(i);
    const Side* holder = nullptr;
    for (auto it = sides.rbegin(); it != sides.rend() && !holder; ++it)
      if (it->record_of[i] != ModuleTree::kNone) holder = &*it;
    Json row = Json::array({report_text(node.path),
                            node.parent == ModuleTree::kNone ? Json(-1) : Json(node.parent),
                            holder ? 0 : 1});
    if (holder) {
      const RecordList::Record record = holder->records->items[holder->record_of[i]];
      const std::string type = report_text(field_string(record, "module_type"));
      const auto [at, added] = type_index.emplace(type, type_index.size());
      if (added) types.push_back(type);
      row.push_back(at->second);
      const bool profile = is_profile(*holder->records);
      row.push_back(profile ? page_number(field_number(record, "calls")) : Json(nullptr));
      for (const char* shapes : {"input_shapes", "output_shapes"}) {
        const FieldName name = field_name(shapes);
        row.push_back(profile && record.has(name) ? page_value(record.value(name)) : Json(nullptr));
      }
    }
    rows.push_back(std::move(row));
  }
  return rows;
}

// An operator row: [operator, calls, flops, macs, time_ms, self_time_ms]
Json operator_rows(const RecordSet& side) {
  Json rows = Json::array();
  for (std::size_t i = 0; i < side.operators.size(); ++i) {
    const RecordList::Record record = side.operators[i];
    Json row = Json::array({report_text(field_string(record, "operator"))});
    for (const char* field : {"calls", "flops", "macs", "time_ms", "self_time_ms"})
      row.push_back(page_number(field_number(record, field)));
    rows.push_back(std::move(row));
  }
  return rows;
}

std::string file_name(const std::string& path) {
  const std::size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

void check_sides(const std::vector<const RecordSet*>& sides) {
  if (sides.empty() || sides.size() > 2) throw UsageError("report: one side or two (OLD NEW)");
  for (const RecordSet* side : sides)
    if (side->kind == RecordSet::Kind::config)
      throw Error(printable(side->source) +
                  ": inspect-config records; a report is drawn from profile records, "
                  "inspect-model records or a model file");
  if (sides.size() == 2 && is_profile(*sides[0]) != is_profile(*sides[1])) {
    const RecordSet& profile = is_profile(*sides[0]) ? *sides[0] : *sides[1];
    const RecordSet& model = is_profile(*sides[0]) ? *sides[1] : *sides[0];
    throw UsageError("report: " + printable(profile.source) + " is a profile and " +
                     printable(model.source) +
                     " a model's records: a comparison needs two of one kind");
  }
}

}  // namespace

const std::vector<ReportMetric>& report_metrics() {
  static const std::vector<ReportMetric> metrics = {
      {"flops", "FLOPs", "flops", ""},
      {"time", "time", "time_ms", "ms"},
      {"parameters", "parameters", "parameters", ""},
      {"memory", "memory", "allocated_bytes", "bytes"},
  };
  return metrics;
}

std::string report_metric_names() {
  std::string names;
  for (const ReportMetric& m : report_metrics()) names += (names.empty() ? "" : "|") + std::string(m.name);
  return names;
}

Json report_data(const std::vector<const RecordSet*>& sides, const ReportOptions& options) {
  check_sides(sides);
  const bool profile = is_profile(*sides[0]);
  std::vector<const ReportMetric*> metrics;
  for (const ReportMetric& m : report_metrics())
    if (profile || std::string(m.name) == "parameters") metrics.push_back(&m);
  const std::string wanted = options.metric.empty() ? metrics[0]->name : options.metric;
  const ReportMetric& opened = metric_named(wanted);
  if (std::find(metrics.begin(), metrics.end(), &opened) == metrics.end())
    throw UsageError("--metric " + std::string(opened.name) +
                     ": inspect-model records give the parameters view only");
  for (const auto& named : options.gate.named_fields()) {
    const std::string& field = named.second;  // a lambda cannot capture a structured binding (C++17)
    const bool known = std::any_of(metrics.begin(), metrics.end(),
                                   [&](const ReportMetric* m) { return field == m->field; });
    if (!known)
      throw UsageError(named.first + " " + field_in_message(field) +
                       ": a report's --tolerance names the field of a metric (flops, time_ms, "
                       "parameters, allocated_bytes)");
  }

  // the tree of every path of both sides, the NEW side's first (its order is the page's)
  std::vector<std::string> paths;
  for (auto it = sides.rbegin(); it != sides.rend(); ++it)
    for (std::size_t i = 0; i < (*it)->items.size(); ++i) paths.push_back(path_of(**it, i));
  const ModuleTree tree(paths);
  std::vector<Side> by_side;
  for (const RecordSet* records : sides) {
    Side side{records, std::vector<std::size_t>(tree.size(), ModuleTree::kNone),
              std::vector<bool>(tree.size(), false)};
    for (std::size_t i = 0; i < records->items.size(); ++i) {
      const std::size_t node = *tree.find(path_of(*records, i));
      if (side.record_of[node] == ModuleTree::kNone) side.record_of[node] = i;
      for (std::size_t at = node; at != ModuleTree::kNone && !side.present[at];
           at = tree.node(at).parent)
        side.present[at] = true;
    }
    by_side.push_back(std::move(side));
  }

  Json data = Json::object();
  data["title"] = report_text(options.title.empty() ? file_name(sides.back()->source) : options.title);
  data["kind"] = profile ? "profile" : "model";
  data["compare"] = sides.size() == 2;
  data["metric"] = opened.name;
  Json metric_list = Json::array();
  for (const ReportMetric* m : metrics)
    metric_list.push_back({{"name", m->name}, {"label", m->label}, {"unit", m->unit}});
  data["metrics"] = std::move(metric_list);
  Json side_list = Json::array();
  for (const RecordSet* side : sides)
    side_list.push_back({{"source", report_text(side->source)},
                         {"header", page_value(side->header)},
                         {"operators", operator_rows(*side)}});
  data["sides"] = std::move(side_list);
  Json types = Json::array();
  data["nodes"] = node_rows(tree, by_side, types);
  data["types"] = std::move(types);

  Json values = Json::object();
  Json changes = Json::object();
  for (const ReportMetric* metric : metrics) {
    std::vector<Values> totals, selves;
    for (const Side& side : by_side) {
      totals.push_back(side_totals(tree, side, *metric));
      selves.push_back(self_values(tree, totals.back()));
    }
    Json per_side = Json::array();
    for (std::size_t s = 0; s < by_side.size(); ++s)
      per_side.push_back({{"total", values_json(totals[s])}, {"self", values_json(selves[s])}});
    values[metric->name] = std::move(per_side);
    if (by_side.size() != 2) continue;
    // each node's change and its (self) box's, and the counts of the modules' changes
    std::string node_changes, self_changes;
    std::map<char, std::int64_t> counts;
    for (std::size_t i = 0; i < tree.size(); ++i) {
      const bool old_present = by_side[0].present[i], new_present = by_side[1].present[i];
      const char change = change_of(old_present, new_present, totals[0][i], totals[1][i],
                                    options.gate, metric->field);
      node_changes += change;
      self_changes += change_of(old_present, new_present, selves[0][i], selves[1][i],
                                options.gate, metric->field);
      if (i != ModuleTree::root() && !tree.node(i).container() &&
          (by_side[0].record_of[i] != ModuleTree::kNone ||
           by_side[1].record_of[i] != ModuleTree::kNone))
        ++counts[change];
    }
    changes[metric->name] = {{"node", node_changes},
                             {"self", self_changes},
                             {"counts",
                              {{"added", counts['a']},
                               {"removed", counts['r']},
                               {"grew", counts['g']},
                               {"shrank", counts['s']},
                               {"unchanged", counts['=']}}}};
  }
  data["values"] = std::move(values);
  if (by_side.size() == 2) {
    data["changes"] = std::move(changes);
    // the environment fields that differ, as diff reports them: those the OLD side records
    // (records of an earlier version lack the newer fields), by their record names
    Json differing = Json::array();
    if (profile)
      for (const char* field : environment_fields("ProfileSummary")) {
        if (!sides[0]->header.contains(field)) continue;
        const Json& b = sides[1]->header.contains(field) ? sides[1]->header[field] : Json();
        if (!same_json(sides[0]->header[field], b)) differing.push_back(field);
      }
    data["environment_differs"] = std::move(differing);
  }
  return data;
}

}  // namespace vin::diagnostics
