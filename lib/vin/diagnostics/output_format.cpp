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
      out << dump_record_line("ModelMetadata", header_json(model)) << '\n';
      for (const auto& m : model.modules())
        out << dump_record_line("ModuleMetadata", to_json(m)) << '\n';
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

namespace vin::diagnostics {

void write_structure_spec(std::ostream& out, const ModelStructureSpec& spec, OutputFormat format) {
  switch (format) {
    case OutputFormat::jsonl: {
      out << dump_record_line("ModelStructureSpec", header_json(spec)) << '\n';
      for (const auto& f : spec.fields())
        out << dump_record_line("ConfigFieldSpec", to_json(f)) << '\n';
      return;
    }
    case OutputFormat::json:
      out << dump_pretty(to_json(spec)) << '\n';
      return;
    case OutputFormat::table:
      out << format_config_table(spec);
      return;
  }
}

void write_capture(std::ostream& out, const std::vector<TensorSnapshot>& snapshots,
                   const CaptureSummary& summary, OutputFormat format,
                   const ForwardSources* sources) {
  switch (format) {
    case OutputFormat::jsonl:
      for (const auto& s : snapshots)
        out << dump_record_line("TensorSnapshot", to_json(s)) << '\n';
      out << dump_record_line("CaptureSummary", to_json(summary)) << '\n';
      return;
    case OutputFormat::json: {
      // the summary's fields, its count replaced by the list itself
      Json doc;
      Json list = Json::array();
      for (const auto& s : snapshots) list.push_back(to_json(s));
      doc["snapshots"] = std::move(list);
      const Json fields = to_json(summary);
      for (auto it = fields.begin(); it != fields.end(); ++it)
        if (it.key() != "snapshots") doc[it.key()] = *it;
      out << dump_pretty(doc) << '\n';
      return;
    }
    case OutputFormat::table:
      out << format_capture_table(snapshots, summary, sources);
      return;
  }
}

}  // namespace vin::diagnostics
