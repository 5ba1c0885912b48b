// inspect-model's table: the module tree with counts, tensors and settings, then the totals, the
// signatures, a .pt2's archive and operators, a weights file's container.
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

}  // namespace vin::diagnostics
