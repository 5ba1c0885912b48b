#include "vin/diagnostics/output/output_format.h"

#include <ostream>

#include "vin/diagnostics/output/text_table.h"
#include "vin/diagnostics/records/error.h"
#include "vin/diagnostics/records/json_encoding.h"

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
      if (const auto& methods = model.details().methods)
        for (const auto& m : *methods)
          out << dump_record_line("MethodSignature", to_json(m)) << '\n';
      for (const auto& m : model.modules()) {
        out << dump_record_line("ModuleMetadata", to_json(m, /*with_tensors=*/false)) << '\n';
        if (const auto& tensors = m.details().tensors)
          for (const auto& t : *tensors) {
            Json line;
            line["module_path"] = m.path();
            const Json fields = to_json(t);
            for (const auto& [key, value] : fields.items()) line[key] = value;
            out << dump_record_line("TensorMetadata", line) << '\n';
          }
      }
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
      for (const auto& s : snapshots) out << dump_record_line("TensorSnapshot", to_json(s)) << '\n';
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

void write_comparison(std::ostream& out, const CompareResult& result, OutputFormat format) {
  switch (format) {
    case OutputFormat::jsonl:
      for (const auto& c : result.comparisons)
        out << dump_record_line("TensorComparison", to_json(c)) << '\n';
      out << dump_record_line("ComparisonSummary", to_json(result.summary)) << '\n';
      return;
    case OutputFormat::json: {
      Json doc;
      Json list = Json::array();
      for (const auto& c : result.comparisons) list.push_back(to_json(c));
      doc["comparisons"] = std::move(list);
      const Json fields = to_json(result.summary);
      for (auto it = fields.begin(); it != fields.end(); ++it) doc[it.key()] = *it;
      out << dump_pretty(doc) << '\n';
      return;
    }
    case OutputFormat::table:
      out << format_comparison_table(result);
      return;
  }
}

void write_diff(std::ostream& out, const RecordSet& old_set, const RecordSet& new_set,
                const std::vector<Change>& changes, const std::vector<std::string>& compared,
                OutputFormat format) {
  std::int64_t added = 0, removed = 0, changed = 0;
  for (const auto& c : changes)
    (c.kind == "added" ? added : c.kind == "removed" ? removed : changed)++;
  Json summary;
  summary["kind"] = to_string(old_set.kind);
  summary["old"] = old_set.source;
  summary["new"] = new_set.source;
  summary["added"] = added;
  summary["removed"] = removed;
  summary["changed"] = changed;
  summary["identical"] = changes.empty();
  summary["compared"] = compared;
  auto change_json = [](const Change& c) {
    Json j;
    j["kind"] = c.kind;
    j["subject"] = c.subject;
    j["path"] = c.path;
    j["field"] = c.field;
    j["old"] = c.old_value;
    j["new"] = c.new_value;
    return j;
  };
  switch (format) {
    case OutputFormat::jsonl:
      for (const auto& c : changes) out << dump_record_line("Change", change_json(c)) << '\n';
      out << dump_record_line("DiffSummary", summary) << '\n';
      return;
    case OutputFormat::json: {
      Json doc = summary;
      Json list = Json::array();
      for (const auto& c : changes) list.push_back(change_json(c));
      doc["changes"] = std::move(list);
      out << dump_pretty(doc) << '\n';
      return;
    }
    case OutputFormat::table:
      out << format_diff_table(old_set, new_set, changes, compared);
      return;
  }
}

}  // namespace vin::diagnostics
