#include "vin/diagnostics/output_format.h"

#include <ostream>

#include "vin/diagnostics/error.h"
#include "vin/diagnostics/json_encoding.h"
#include "vin/diagnostics/text_table.h"

namespace vin::diagnostics {

OutputFormat parse_output_format(std::string_view name) {
  if (name == "jsonl") return OutputFormat::jsonl;
  if (name == "json") return OutputFormat::json;
  if (name == "table") return OutputFormat::table;
  throw UsageError("unknown output format '" + std::string(name) +
                   "' (expected jsonl, json or table)");
}

void write_model_metadata(std::ostream& out, const ModelMetadata& model, OutputFormat format) {
  switch (format) {
    case OutputFormat::jsonl: {
      Json header;
      header["model_type"] = model.model_type();
      header["total_parameters"] = model.total_parameters();
      header["trainable_parameters"] = model.trainable_parameters();
      out << dump_line(with_record_key("ModelMetadata", header)) << '\n';
      for (const auto& m : model.modules())
        out << dump_line(with_record_key("ModuleMetadata", to_json(m))) << '\n';
      return;
    }
    case OutputFormat::json:
      out << dump_pretty(to_json(model)) << '\n';
      return;
    case OutputFormat::table:
      out << format_model_table(model);
      return;
  }
}

}  // namespace vin::diagnostics
