#include "vin/diagnostics/tables/table_views.h"

#include <stdexcept>
#include <string>

namespace vin::diagnostics {
namespace {

constexpr TextTable::Align left = TextTable::Align::left;
constexpr TextTable::Align right = TextTable::Align::right;

}  // namespace

const std::vector<TableView>& table_views() {
  static const std::vector<TableView> views = {
      {"model",
       "ModuleMetadata",
       {{"Module", left, {"path"}},
        {"Type", left, {"module_type"}},
        {"Parameters", right, {"direct_parameters"}},
        {"Trainable", right, {"trainable_parameters"}},
        {"Buffers", right, {"direct_buffers"}},
        {"Mode", left, {"training"}},
        {"Size", right, {"tensors"}},         // --tensors: the nbytes of the module's tensors
        {"Settings", left, {"attributes"}}},  // --attributes
       {}},
      // --tensors: a row per tensor under its module, in the model view's columns
      {"model tensors",
       "TensorMetadata",
       {{"Module", left, {"name"}},
        {"Type", left, {"dtype", "shape", "device"}},
        {"Parameters", right, {"numel", "kind"}},
        {"Trainable", right, {"numel", "kind", "requires_grad"}},
        {"Buffers", right, {"numel", "kind"}},
        {"Mode", left, {}},
        {"Size", right, {"nbytes"}},
        {"Settings", left, {}}},
       {"storage_crc32", "key", "file", "shared_with", "data_crc32"}},
      {"config",
       "ConfigFieldSpec",
       {{"Field", left, {"path"}},
        {"Declared", left, {"declared_type"}},
        {"Configured", left, {"configured_type"}},
        {"Value", left, {"value"}}},
       {}},
      {"capture",
       "TensorSnapshot",
       {{"Input", left, {}},  // several --inputs files: the file of the forward
        {"Module", left, {"module_path"}},
        {"Call", right, {"call_index"}},
        {"Side", left, {"direction"}},
        {"Tensor", left, {"tensor_path"}},
        {"Shape", left, {"shape"}},
        {"Dtype", left, {"dtype", "device"}},
        {"First values", left, {"values", "numel", "sample_omission_reason"}},
        {"Stats", left, {"stats"}}},  // --stats
       {"sampled_bytes"}},
      {"compare",
       "TensorComparison",
       {{"Tensor", left, {"module_path", "call_index", "direction", "tensor_path", "tensor_path_b"}},
        {"A", left, {"shape_a", "dtype_a"}},
        {"B", left, {"shape_b", "dtype_b"}},
        {"Mismatches", right,
         {"mismatches", "numel", "only_in", "statistics_only", "structure_differs"}},
        {"Max abs", right, {"max_abs_error"}},
        {"Max rel", right, {"max_rel_error"}},
        {"atol/rtol", left, {"atol", "rtol"}}},
       {"within_tolerance"}},  // the table lists the pairs beyond tolerance
      {"profile",
       "ModuleProfile",
       {{"Module (type)", left, {"module_path", "module_type"}},
        {"Output shape", left, {"output_shapes"}},
        {"Params", right, {"parameters"}},
        {"FLOPs", right, {"flops"}},
        {"Self ms", right, {"self_time_ms"}},  // with the time of the rows --depth folds
        {"Total ms", right, {"time_ms"}},
        {"Share", right, {"time_ms"}},  // of the instrumented forward
        {"Peak mem", right, {"peak_bytes"}}},
       {"calls", "input_shapes", "macs", "self_flops", "allocated_bytes", "uncalled_children",
        "called_instead"}},
      {"profile operators",
       "OperatorProfile",
       {{"Operator", left, {"operator"}},
        {"Calls", right, {"calls"}},
        {"FLOPs", right, {"flops"}},
        {"MACs", right, {"macs"}},
        {"Self ms", right, {"self_time_ms"}},
        {"Total ms", right, {"time_ms"}},
        {"Share", right, {"time_ms"}}},
       {}},
  };
  return views;
}

const TableView& table_view(std::string_view name) {
  for (const TableView& view : table_views())
    if (name == view.name) return view;
  throw std::logic_error("no table view named " + std::string(name));
}

void add_view_column(TextTable& table, const TableView& view, std::string_view header) {
  for (const TableColumn& column : view.columns)
    if (header == column.header) return table.add_column(column.header, column.align);
  throw std::logic_error("the " + std::string(view.name) + " table has no column " +
                         std::string(header));
}

}  // namespace vin::diagnostics
