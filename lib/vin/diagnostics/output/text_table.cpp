#include "vin/diagnostics/output/text_table.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <limits>
#include <string_view>
#include <unordered_map>
#include <variant>

#include "vin/diagnostics/output/table_views.h"
#include "vin/diagnostics/records/json_encoding.h"
#include "vin/diagnostics/text/printable.h"

namespace vin::diagnostics {
namespace {

// Text from the inputs (names, paths, values) as a table shows it: control characters (newlines
// included) and invalid UTF-8 escaped, nothing cut, so that no input reaches the terminal raw or
// starts a line of its own.
std::string shown(std::string_view text) {
  return printable(text, std::numeric_limits<std::size_t>::max());
}

std::string digits_with_separators(const std::string& digits) {
  std::string out;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out.push_back(',');
    out.push_back(digits[i]);
  }
  return out;
}

std::string value_text(const Json& v) {
  // an integer past int64 (an exact count of FLOPs, a saved record's big integer) as its digits
  if (v.is_number_unsigned()) return digits_with_separators(std::to_string(v.get<std::uint64_t>()));
  if (is_big_integer(v)) {
    const std::string digits = big_integer_digits(v);
    return digits[0] == '-' ? "-" + digits_with_separators(digits.substr(1))
                            : digits_with_separators(digits);
  }
  if (v.is_number_integer()) return with_thousands_separators(v.get<std::int64_t>());
  if (v.is_object() && v.contains("type_marker") && v.size() == 1 && v["type_marker"].is_string())
    return "<" + v["type_marker"].get<std::string>() + ">";
  return dump_line(v);
}

// A path as diff's table writes it; a saved record may hold anything there (JSON text then).
std::string path_text(const Json& path) {
  if (path.is_string()) return path.get<std::string>();
  if (path.is_array()) {
    std::string out;
    for (const auto& p : path)
      out += (out.empty() ? "" : ".") + (p.is_string() ? p.get<std::string>() : dump_line(p));
    return out;
  }
  return path.is_null() ? "" : dump_line(path);
}

constexpr std::size_t kColumnGap = 2;
// Deeper modules are drawn at this indentation with their depth written out, so a 200-deep
// model stays readable.
constexpr std::size_t kMaxIndentDepth = 12;

// Display width of UTF-8 text: code points, not bytes.
std::size_t display_width(const std::string& text) {
  return static_cast<std::size_t>(std::count_if(text.begin(), text.end(), [](char c) {
    return (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  }));
}

void rstrip(std::string& line) {
  while (!line.empty() && line.back() == ' ') line.pop_back();
}

std::size_t depth_of(const std::string& path) {
  if (path == kRootPath) return 0;
  return static_cast<std::size_t>(std::count(path.begin(), path.end(), '.')) + 1;
}

// Two spaces a level; past kMaxIndentDepth the depth is written out instead.
std::string indentation(std::size_t depth) {
  if (depth <= kMaxIndentDepth) return std::string(2 * depth, ' ');
  return std::string(2 * kMaxIndentDepth, ' ') + "[" + std::to_string(depth) + "] ";
}

std::string tree_label(const std::string& path) {
  const std::size_t depth = depth_of(path);
  return indentation(depth) + (depth == 0 ? path : path.substr(path.rfind('.') + 1));
}

// A tree that lacks some modules (profile's rows are the modules called, in call order: a
// ModuleList is never called): each row hangs under its nearest ancestor among the rows before
// it, named by the rest of its path ("stages.0" under the root when "stages" has no row).
struct TreeRow {
  std::size_t depth = 0;  // in the tree drawn
  std::size_t parent = SIZE_MAX;  // the row it hangs under; SIZE_MAX for a top row
  std::string name;
};

std::vector<TreeRow> tree_of_rows(const std::vector<std::string>& paths) {
  std::unordered_map<std::string, std::size_t> row_of;
  std::vector<TreeRow> rows;
  for (const std::string& path : paths) {
    TreeRow row{0, SIZE_MAX, path};
    if (path != kRootPath) {
      const auto root = row_of.find(kRootPath);
      if (root != row_of.end()) row = {rows[root->second].depth + 1, root->second, path};
      for (auto dot = path.rfind('.'); dot != std::string::npos; dot = path.rfind('.', dot - 1)) {
        const auto ancestor = row_of.find(path.substr(0, dot));
        if (ancestor != row_of.end()) {
          row = {rows[ancestor->second].depth + 1, ancestor->second, path.substr(dot + 1)};
          break;
        }
        if (dot == 0) break;
      }
    }
    row_of.emplace(path, rows.size());
    rows.push_back(std::move(row));
  }
  return rows;
}

}  // namespace

std::string with_thousands_separators(std::int64_t value) {
  const bool negative = value < 0;
  // work on the unsigned magnitude so INT64_MIN is printed correctly
  std::uint64_t magnitude =
      negative ? ~static_cast<std::uint64_t>(value) + 1 : static_cast<std::uint64_t>(value);
  const std::string out = digits_with_separators(std::to_string(magnitude));
  return negative ? "-" + out : out;
}

void TextTable::add_column(std::string header, Align align) {
  headers_.push_back(std::move(header));
  aligns_.push_back(align);
}

void TextTable::add_row(std::vector<std::string> cells) {
  cells.resize(headers_.size());
  for (std::string& cell : cells) cell = shown(cell);
  rows_.push_back(std::move(cells));
}

std::vector<std::size_t> TextTable::column_widths() const {
  std::vector<std::size_t> widths;
  for (const auto& h : headers_) widths.push_back(display_width(h));
  for (const auto& row : rows_)
    for (std::size_t c = 0; c < row.size(); ++c)
      widths[c] = std::max(widths[c], display_width(row[c]));
  return widths;
}

std::size_t TextTable::width() const {
  const auto widths = column_widths();
  std::size_t total = 0;
  for (auto w : widths) total += w;
  return widths.empty() ? 0 : total + kColumnGap * (widths.size() - 1);
}

std::string cut_to(const std::string& text, std::size_t width) {
  const std::string ellipsis = "...";
  if (width <= ellipsis.size()) return ellipsis.substr(0, width);
  std::string out;
  std::size_t shown_width = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const bool starts_character = (static_cast<unsigned char>(text[i]) & 0xC0) != 0x80;
    if (starts_character && ++shown_width > width - ellipsis.size()) break;
    out += text[i];
  }
  return out + ellipsis;
}

std::size_t TextTable::fit(std::size_t max_width, const std::vector<Shrinkable>& shrinkable) {
  std::vector<std::size_t> widths = column_widths();
  std::size_t total = width();
  while (total > max_width) {
    const Shrinkable* widest = nullptr;
    std::size_t spare = 0;
    for (const Shrinkable& s : shrinkable) {
      const std::size_t least = std::max(s.min_width, display_width(headers_[s.column]));
      if (widths[s.column] > least && widths[s.column] - least > spare) {
        spare = widths[s.column] - least;
        widest = &s;
      }
    }
    if (!widest) break;
    --widths[widest->column];
    --total;
  }
  std::size_t cut = 0;
  for (auto& row : rows_)
    for (const Shrinkable& s : shrinkable)
      if (display_width(row[s.column]) > widths[s.column]) {
        row[s.column] =
            s.cut ? s.cut(row[s.column], widths[s.column]) : cut_to(row[s.column], widths[s.column]);
        ++cut;
      }
  return cut;
}

std::string TextTable::render() const {
  const auto widths = column_widths();
  auto render_row = [&](const std::vector<std::string>& cells) {
    std::string line;
    for (std::size_t c = 0; c < cells.size(); ++c) {
      const std::size_t pad = widths[c] - display_width(cells[c]);
      if (c > 0) line.append(kColumnGap, ' ');
      if (aligns_[c] == Align::right) line.append(pad, ' ');
      line += cells[c];
      if (aligns_[c] == Align::left) line.append(pad, ' ');
    }
    rstrip(line);
    return line;
  };
  std::string out = render_row(headers_) + '\n' + std::string(width(), '-') + '\n';
  for (const auto& row : rows_) out += render_row(row) + '\n';
  if (!out.empty()) out.pop_back();
  return out;
}

namespace {

// "920 B", "1.7 KiB", "44.6 MiB": a size for people (the JSON formats carry the bytes)
std::string byte_size(std::int64_t bytes) {
  if (bytes < 1024) return std::to_string(bytes) + " B";
  const char* units[] = {"KiB", "MiB", "GiB", "TiB", "PiB"};
  double value = static_cast<double>(bytes) / 1024;
  std::size_t unit = 0;
  while (value >= 1024 && unit + 1 < std::size(units)) {
    value /= 1024;
    ++unit;
  }
  char text[32];
  std::snprintf(text, sizeof text, "%.1f %s", value, units[unit]);
  return text;
}

// `float32[16, 3, 3, 3] cpu`: a tensor's dtype (without "torch."), shape and device
std::string tensor_summary(const TensorMetadata& t) {
  std::string shape;
  for (const std::int64_t n : t.shape) shape += (shape.empty() ? "" : ", ") + std::to_string(n);
  const std::string dtype = t.dtype.rfind("torch.", 0) == 0 ? t.dtype.substr(6) : t.dtype;
  return dtype + "[" + shape + "]" + (t.device ? " " + *t.device : std::string());
}

// a count, or "-" where the file does not say (a weights file's trainable elements and buffers)
std::string count_or_dash(const std::optional<std::int64_t>& count) {
  return count ? with_thousands_separators(*count) : "-";
}

// `kernel_size=[3, 3], stride=[1, 1]`
std::string attributes_text(const Json& attributes) {
  std::string out;
  for (const auto& [name, value] : attributes.items())
    out += (out.empty() ? "" : ", ") + name + "=" + value_text(value);
  return out;
}

// `float32[s0, 4]`: a torch.export tensor's dtype and shape, symbolic sizes by name
std::string tensor_spec_text(const TensorSpec& t) {
  std::string shape;
  for (const Json& n : t.shape)
    shape += (shape.empty() ? "" : ", ") + (n.is_string() ? n.get<std::string>() : n.dump());
  const std::string dtype = t.dtype.rfind("torch.", 0) == 0 ? t.dtype.substr(6) : t.dtype;
  return dtype + "[" + shape + "]";
}

// `forward(x: Tensor, k: int = 3) -> Tensor`; a torch.export program's forward with its
// tensors, `forward(x: float32[s0, 4]) -> float32[s0, 3]`
std::string signature_text(const MethodSignature& method) {
  std::string arguments;
  for (const auto& a : method.arguments) {
    arguments += (arguments.empty() ? "" : ", ") + a.name + ": " +
                 (a.tensor ? tensor_spec_text(*a.tensor) : a.type);
    if (a.has_default) arguments += " = " + dump_line(a.default_value);
  }
  std::string returns = method.returns;
  if (method.outputs && !method.outputs->empty()) {
    returns.clear();
    for (const auto& r : *method.outputs)
      returns += (returns.empty() ? "" : ", ") + (r.tensor ? tensor_spec_text(*r.tensor) : r.type);
    if (method.outputs->size() > 1) returns = "(" + returns + ")";
  }
  return method.name + "(" + arguments + ") -> " + returns;
}

// `1 <= s0 <= 64`, `s0 >= 2`: a symbolic dimension's range
std::string dimension_text(const SymbolicDimension& d) {
  if (d.min && d.max)
    return std::to_string(*d.min) + " <= " + d.name + " <= " + std::to_string(*d.max);
  if (d.min) return d.name + " >= " + std::to_string(*d.min);
  if (d.max) return d.name + " <= " + std::to_string(*d.max);
  return d.name + " unbounded";
}

constexpr std::size_t kSettingsRuleWidth = 120;

std::int64_t module_bytes(const ModuleMetadata& m) {
  std::int64_t bytes = 0;
  for (const auto& t : *m.details().tensors) bytes += t.nbytes;
  return bytes;
}

}  // namespace

std::string format_export_archive_table(const ExportArchive& archive) {
  std::string out = "torch.export archive: " + shown(archive.layout) + ", schema " +
                    shown(archive.schema_version.value_or("-")) + ", torch " +
                    shown(archive.torch_version.value_or("-")) + '\n';
  for (const auto& m : archive.aoti.value_or(std::vector<AotiModel>{}))
    out += "  compiled model " + shown(m.model) + ": device " + shown(m.device.value_or("-")) +
           ", platform " + shown(m.platform.value_or("-")) + '\n';
  return out;
}

std::string format_model_table(const ModelMetadata& model) {
  const bool tensors = model.details().parameter_bytes.has_value();
  const bool attributes = !model.modules().empty() && model.modules()[0].details().attributes;
  TextTable table;
  add_view_columns(table, table_view("model"), [&](std::string_view header) {
    return (header != "Size" || tensors) && (header != "Settings" || attributes);
  });
  for (const auto& m : model.modules()) {
    std::vector<std::string> row{tree_label(m.path()),
                                 m.module_type().value_or("-"),
                                 with_thousands_separators(m.direct_parameters()),
                                 count_or_dash(m.trainable_parameters()),
                                 count_or_dash(m.direct_buffers()),
                                 !m.training()   ? "-"
                                 : *m.training() ? "train"
                                                 : "eval"};
    if (tensors) row.push_back(byte_size(module_bytes(m)));
    if (attributes) row.push_back(attributes_text(*m.details().attributes));
    table.add_row(std::move(row));
    if (!tensors) continue;
    // the module's tensors under it, one level deeper, their counts in the matching column
    const std::string indent = indentation(depth_of(m.path()) + 1) + "- ";
    for (const auto& t : *m.details().tensors) {
      const bool parameter = t.kind == "parameter";
      const std::string numel = with_thousands_separators(t.numel);
      const std::string trainable =
          !parameter ? "" : !t.requires_grad ? "-" : *t.requires_grad ? numel : "";
      std::vector<std::string> tensor_row{
          indent + t.name, tensor_summary(t), parameter ? numel : "", trainable,
          parameter ? "" : numel, "", byte_size(t.nbytes)};
      if (attributes) tensor_row.emplace_back();
      table.add_row(std::move(tensor_row));
    }
  }

  // a Settings column can be long: the rules stop at a screen's width then
  const std::string rule(
      attributes ? std::min<std::size_t>(table.width(), kSettingsRuleWidth) : table.width(), '=');
  std::string out = "Model: " + shown(model.model_type().value_or("-")) + '\n' + rule + '\n' +
                    table.render() + '\n' + rule + '\n';
  std::vector<std::pair<std::string, std::string>> lines = {
      {"Modules:", with_thousands_separators(static_cast<std::int64_t>(model.modules().size()))},
      {"Total parameters:", with_thousands_separators(model.total_parameters())},
  };
  // a weights file does not say which tensors are trainable, nor which are buffers
  if (const auto trainable = model.trainable_parameters()) {
    lines.emplace_back("Trainable parameters:", with_thousands_separators(*trainable));
    lines.emplace_back("Non-trainable parameters:",
                       with_thousands_separators(model.total_parameters() - *trainable));
  }
  if (tensors) {
    const std::int64_t parameter_bytes = *model.details().parameter_bytes;
    const std::optional<std::int64_t> buffer_bytes = model.details().buffer_bytes;
    lines.emplace_back(buffer_bytes ? "Parameter size:" : "Tensor size:",
                       byte_size(parameter_bytes));
    if (buffer_bytes) {
      lines.emplace_back("Buffer size:", byte_size(*buffer_bytes));
      lines.emplace_back("Model size:", byte_size(parameter_bytes + *buffer_bytes));
    }
  }
  std::size_t label_width = 0, value_width = 0;
  for (const auto& [label, value] : lines) {
    label_width = std::max(label_width, label.size());
    value_width = std::max(value_width, value.size());
  }
  for (const auto& [label, value] : lines)
    out += label + std::string(label_width - label.size() + 1, ' ') +
           std::string(value_width - value.size(), ' ') + shown(value) + '\n';
  if (const auto& why = model.details().stopped_by) out += "Stopped by: " + shown(*why) + '\n';
  if (const auto& methods = model.details().methods) {
    out += "Signatures:\n";
    for (const auto& method : *methods) {
      out += "  " + shown(signature_text(method)) + '\n';
      for (const auto& d : method.dimensions.value_or(std::vector<SymbolicDimension>{}))
        out += "    " + shown(dimension_text(d)) + '\n';
    }
  }
  if (const auto& archive = model.details().export_archive)
    out += format_export_archive_table(*archive);
  if (const auto& weights = model.details().weights_file) {
    out += "Weights file: " + shown(weights->format) + '\n';
    if (weights->state_dict_path.is_null())
      out += "State dict: none (no mapping of tensors)\n";
    else if (!weights->state_dict_path.empty())
      out += "State dict at: " + shown(dump_line(weights->state_dict_path)) + '\n';
    for (const auto& shard : weights->files) out += "  shard: " + shown(shard) + '\n';
    if (!weights->metadata.is_null()) out += "Metadata: " + shown(dump_line(weights->metadata)) + '\n';
    for (const auto& [dtype, elements] : weights->dtypes)
      out += "  " + shown(dtype) + ": " + with_thousands_separators(elements) + " elements\n";
    if (!weights->values.empty()) out += "Checkpoint values:\n";
    for (const auto& v : weights->values)
      out += "  " + shown(v.key) + " = " + shown(dump_line(v.value)) + " (" + shown(v.type) + ")\n";
    if (!model.details().checkpoint_tensors.empty()) out += "Checkpoint tensors:\n";
    for (const auto& t : model.details().checkpoint_tensors)
      out += "  " + shown(t.key.value_or(t.name)) + ": " + shown(tensor_summary(t)) + ", " +
             byte_size(t.nbytes) + '\n';
  }
  if (const auto& operators = model.details().operators) {
    TextTable calls;
    calls.add_column("Module", TextTable::Align::left);
    calls.add_column("Operator", TextTable::Align::left);
    calls.add_column("Calls", TextTable::Align::right);
    for (const auto& c : *operators)
      calls.add_row({shown(c.module_path), shown(c.op), with_thousands_separators(c.calls)});
    out += "Operators:\n" + calls.render() + '\n';
  }
  return out;
}

namespace {

constexpr std::size_t kTableValues = 4;

std::string join(const std::vector<std::string>& parts, const char* sep) {
  std::string out;
  for (std::size_t i = 0; i < parts.size(); ++i) out += (i ? sep : "") + parts[i];
  return out;
}

std::string value_text(const SampleValue& v) {
  if (const auto* i = std::get_if<std::int64_t>(&v)) return std::to_string(*i);
  if (const auto* b = std::get_if<bool>(&v)) return *b ? "true" : "false";
  const double d = std::get<double>(v);
  // six significant digits are enough to read a table; the JSON formats carry every digit
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", d);
  if (std::isnan(d)) return "nan";
  if (std::isinf(d)) return d > 0 ? "inf" : "-inf";
  return buf;
}

std::string first_values(const TensorSnapshot& s) {
  if (s.sample_omission_reason()) return "(" + *s.sample_omission_reason() + ")";
  if (s.numel() == 0) return "(empty)";
  if (s.values().empty()) return "(no bytes left)";
  std::vector<std::string> parts;
  for (std::size_t i = 0; i < s.values().size() && i < kTableValues; ++i)
    parts.push_back(value_text(s.values()[i]));
  std::string text = join(parts, " ");
  if (static_cast<std::int64_t>(parts.size()) < s.numel()) text += " ...";
  return text;
}

// min/max/mean for people, and a loud mark on tensors that hold NaN or infinity.
std::string stats_text(const TensorSnapshot& s) {
  if (!s.stats() || s.stats()->entries.empty()) return "";
  std::string text;
  std::int64_t nan = 0, inf = 0;
  for (const auto& [name, value] : s.stats()->entries) {
    if (name == "nan_count") nan = std::get<std::int64_t>(value);
    if (name == "inf_count") inf = std::get<std::int64_t>(value);
    if (name != "min" && name != "max" && name != "mean" && name != "true_count") continue;
    std::string v = "null";
    if (const auto* i = std::get_if<std::int64_t>(&value)) v = std::to_string(*i);
    if (const auto* d = std::get_if<double>(&value)) v = value_text(SampleValue(*d));
    text += (text.empty() ? "" : " ") + name + "=" + v;
  }
  if (nan || inf)
    text = "NON-FINITE (" + std::to_string(nan) + " NaN, " + std::to_string(inf) + " inf) " + text;
  return text;
}

}  // namespace

std::string format_config_table(const ModelStructureSpec& spec) {
  TextTable table;
  add_view_columns(table, table_view("config"), [](std::string_view) { return true; });
  for (const auto& f : spec.fields()) {
    std::string label = indentation(f.path().size() - 1);
    // a model held in a sequence has no record of its own: show its index beside its fields
    if (f.path().size() >= 2) {
      const std::string& parent = f.path()[f.path().size() - 2];
      if (!parent.empty() && parent.find_first_not_of("0123456789") == std::string::npos)
        label += "[" + parent + "] ";
    }
    label += f.path().back();
    std::string value;
    if (const auto* marker = std::get_if<TypeMarker>(&f.value()))
      value = "<" + marker->type + ">";
    else if (const auto* text = std::get_if<std::string>(&f.value()))
      value = dump_line(Json(*text));
    else
      value = dump_line(to_json(f.value()));
    table.add_row({label, f.declared_type().value_or("-"), f.configured_type(), value});
  }
  std::string out = "Config: " + shown(spec.config_type().value_or("(untagged)")) +
                    "   Target: " + shown(spec.target_type().value_or("-")) + '\n';
  const std::string rule(table.width(), '=');
  out += rule + '\n' + table.render() + '\n' + rule + '\n';
  out += "Fields: " + with_thousands_separators(static_cast<std::int64_t>(spec.fields().size())) +
         '\n';
  return out;
}

std::string format_capture_table(const std::vector<TensorSnapshot>& snapshots,
                                 const CaptureSummary& summary, const ForwardSources* sources) {
  TextTable table;
  const bool with_sources = sources && sources->files.size() > 1;
  const bool with_stats = summary.with_stats;
  add_view_columns(table, table_view("capture"), [&](std::string_view header) {
    return (header != "Input" || with_sources) && (header != "Stats" || with_stats);
  });
  std::size_t forward = 0;
  for (std::size_t row_index = 0; row_index < snapshots.size(); ++row_index) {
    const TensorSnapshot& s = snapshots[row_index];
    std::vector<std::string> dims;
    for (auto d : s.shape()) dims.push_back(std::to_string(d));
    std::string dtype = s.dtype();
    if (dtype.rfind("torch.", 0) == 0) dtype = dtype.substr(6);
    if (s.device() != "cpu") dtype += " " + s.device();
    std::vector<std::string> row{s.module_path(),
                                 std::to_string(s.call_index()),
                                 to_string(s.direction()),
                                 join(s.tensor_path(), "."),
                                 "[" + join(dims, ", ") + "]",
                                 dtype,
                                 first_values(s)};
    if (with_stats) row.push_back(stats_text(s));
    if (with_sources) {
      while (forward + 1 < sources->ends.size() && row_index >= sources->ends[forward]) ++forward;
      const std::string& file = sources->files[std::min(forward, sources->files.size() - 1)];
      row.insert(row.begin(), std::filesystem::path(file).filename().string());
    }
    table.add_row(std::move(row));
  }
  std::string out = table.render() + '\n';
  out += std::string(table.width(), '=') + '\n';
  out += "Snapshots: " + with_thousands_separators(summary.snapshots) +
         "   Sampled bytes: " + with_thousands_separators(summary.sampled_bytes) +
         "   Stopped by: " + (summary.stopped_by ? *summary.stopped_by : "-") + '\n';
  if (with_stats) {
    out += "Checked tensors: " + with_thousands_separators(summary.checked_tensors) +
           "   Non-finite: " + with_thousands_separators(summary.nonfinite_tensors) + '\n';
    out += "First non-finite: ";
    if (const auto& at = summary.first_nonfinite)
      out += shown(at->module_path + " call " + std::to_string(at->call_index) + " " +
                   to_string(at->direction) + " " + join(at->tensor_path, ".")) +
             (at->recorded ? "" : " (past the snapshot quotas: no snapshot)") + '\n';
    else
      out += "none\n";
  }
  return out;
}

namespace {

constexpr std::size_t kWorstPairs = 20;

std::string key_text(const TensorKey& key) {
  std::string out =
      key.module_path + " #" + std::to_string(key.call_index) + " " + to_string(key.direction);
  for (const auto& p : key.tensor_path) out += "." + p;
  return shown(out);
}

std::string error_text(const std::optional<double>& e) {
  if (!e) return "-";
  char text[32];
  std::snprintf(text, sizeof text, "%.3g", *e);
  return text;
}

std::string dtype_text(const std::optional<std::string>& d) {
  if (!d) return "-";
  return d->rfind("torch.", 0) == 0 ? d->substr(6) : *d;
}

// how bad a pair is: the share of mismatching elements, then the largest error
double badness(const TensorComparison& c) {
  const double share = c.mismatches && c.numel > 0 ? double(*c.mismatches) / double(c.numel) : 1.0;
  return share * 1e6 + std::min(c.max_abs_error.value_or(0.0), 1e5);
}

}  // namespace

std::string format_comparison_table(const CompareResult& result) {
  const ComparisonSummary& s = result.summary;
  std::string out;
  if (s.first_divergence)
    out += "First divergence: " + key_text(*s.first_divergence) + "\n";
  else
    out += "No divergence beyond tolerance.\n";
  std::vector<const TensorComparison*> shown;
  for (const auto& c : result.comparisons)
    if (!c.within_tolerance) shown.push_back(&c);
  std::stable_sort(shown.begin(), shown.end(), [](const auto* a, const auto* b) {
    return !a->only_in && !b->only_in && badness(*a) > badness(*b);
  });
  if (!shown.empty()) {
    TextTable table;
    add_view_columns(table, table_view("compare"), [](std::string_view) { return true; });
    for (std::size_t i = 0; i < shown.size() && i < kWorstPairs; ++i) {
      const TensorComparison& c = *shown[i];
      const auto side = [](const auto& shape, const auto& dtype) {
        if (!shape) return std::string("-");
        std::string dims;
        for (const auto d : *shape) dims += (dims.empty() ? "" : ", ") + std::to_string(d);
        return dtype_text(dtype) + "[" + dims + "]";
      };
      std::string mism = c.mismatches ? with_thousands_separators(*c.mismatches) + " of " +
                                            with_thousands_separators(c.numel)
                                      : (c.only_in ? "only in " + *c.only_in : "stats");
      table.add_row({key_text(c.key), side(c.shape_a, c.dtype_a), side(c.shape_b, c.dtype_b), mism,
                     error_text(c.max_abs_error), error_text(c.max_rel_error),
                     error_text(c.atol) + "/" + error_text(c.rtol)});
    }
    out += table.render() + "\n";
    if (shown.size() > kWorstPairs)
      out += "... and " + std::to_string(shown.size() - kWorstPairs) + " more beyond tolerance\n";
  }
  out += std::to_string(s.pairs) + " pairs: " + std::to_string(s.within) + " within tolerance, " +
         std::to_string(s.beyond) + " beyond; only in A: " + std::to_string(s.only_in_a) +
         ", only in B: " + std::to_string(s.only_in_b);
  if (s.statistics_only) out += "; by statistics only: " + std::to_string(s.statistics_only);
  out += "\n";
  return out;
}

namespace {

// What an added or removed item was, in a few words.
std::string item_summary(const Json& item) {
  if (!item.is_object() || item.contains("type_marker")) return value_text(item);  // a value
  if (item.contains("direct_parameters"))                                          // a module
    return item.value("module_type", "") + ", " + value_text(item["direct_parameters"]) +
           " parameters";
  if (item.contains("configured_type"))  // a configuration field
    return item.value("configured_type", "") + " = " + value_text(item["value"]);
  if (item.contains("dtype"))  // a tensor
    return item.value("kind", "") + " " + item.value("dtype", "") + " " + dump_line(item["shape"]);
  if (item.contains("arguments"))  // a method
    return std::to_string(item["arguments"].size()) + " arguments -> " + item.value("returns", "");
  return dump_line(item);
}

}  // namespace

std::string format_diff_table(const RecordSet& old_set, const RecordSet& new_set,
                              const std::vector<Change>& changes,
                              const std::vector<std::string>& compared) {
  const DiffSummary summary = summarize(old_set, new_set, changes, compared);
  std::string out = "--- " + shown(old_set.source) + "\n+++ " + shown(new_set.source) + "\n";
  for (const auto& c : changes) {
    const std::string where = c.subject + (c.path.is_null() ? "" : " " + path_text(c.path));
    if (c.kind == "changed" || c.kind == "environment") {
      const std::string field = c.field.is_string() ? " " + c.field.get<std::string>() : "";
      const std::string gate = c.kind == "environment" ? " (environment)"
                               : !c.within_tolerance   ? ""
                               : *c.within_tolerance   ? " (within tolerance)"
                                                       : " (beyond tolerance)";
      out += "~ " +
             shown(where + ":" + field + " " + value_text(c.old_value) + " -> " +
                   value_text(c.new_value)) +
             gate + "\n";
    } else {
      out +=
          (c.kind == "added" ? "+ " : "- ") +
          shown(where + " (" + item_summary(c.kind == "added" ? c.new_value : c.old_value) + ")") +
          "\n";
    }
  }
  std::string kinds;
  for (const auto& k : compared) kinds += (kinds.empty() ? "" : ", ") + k;
  out += "compared: " + kinds + "\n";
  out += std::string(summary.identical ? "identical" : "different") + ": " +
         std::to_string(summary.added) + " added, " + std::to_string(summary.removed) +
         " removed, " + std::to_string(summary.changed) + " changed" +
         (summary.within_tolerance
              ? " (" + std::to_string(summary.within_tolerance) + " within tolerance)"
              : std::string()) +
         (summary.environment
              ? "; " + std::to_string(summary.environment) +
                    " environment (profiles measured with other threads, device, inputs or "
                    "LibTorch)"
              : std::string()) +
         "\n";
  return out;
}

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
