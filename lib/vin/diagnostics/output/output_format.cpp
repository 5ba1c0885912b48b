#include "vin/diagnostics/output/output_format.h"

#include <ostream>

#include "vin/diagnostics/output/diff_markdown.h"
#include "vin/diagnostics/tables/command_tables.h"
#include "vin/diagnostics/records/error.h"
#include "vin/diagnostics/json/json_encoding.h"
#include "vin/diagnostics/json/model_document.h"

namespace vin::diagnostics {

OutputFormat parse_output_format(std::string_view name) {
  if (name == "jsonl") return OutputFormat::jsonl;
  if (name == "json") return OutputFormat::json;
  if (name == "table") return OutputFormat::table;
  if (name == "markdown") return OutputFormat::markdown;
  throw UsageError("unknown output format '" + std::string(name) +
                   "' (expected jsonl, json, table or markdown)");
}

void write_export_archive(std::ostream& out, const ExportArchive& archive, OutputFormat format) {
  switch (format) {
    case OutputFormat::jsonl:
      out << dump_record_line("ExportArchive", to_json(archive)) << '\n';
      return;
    case OutputFormat::json:
      out << dump_pretty(Json::object({{"export_archive", to_json(archive)}})) << '\n';
      return;
    case OutputFormat::table:
    case OutputFormat::markdown:  // diff's only: the command line offers it nowhere else
      out << format_export_archive_table(archive);
      return;
  }
}

void write_model_metadata(std::ostream& out, const ModelMetadata& model, OutputFormat format) {
  switch (format) {
    case OutputFormat::jsonl: {
      // the parts in the model document's order (json/model_document.h), ModelMetadata's line
      // after the containers
      const auto line = [&out](const char* record, const Json& object) {
        out << dump_record_line(record, object) << '\n';
      };
      for (std::size_t i = 0; i < kModelPartCount; ++i)
        if (kModelParts[i].before_model) for_each_part_record(model, kModelParts[i].part, line);
      line("ModelMetadata", header_json(model));
      for (std::size_t i = 0; i < kModelPartCount; ++i)
        if (!kModelParts[i].before_model) for_each_part_record(model, kModelParts[i].part, line);
      return;
    }
    case OutputFormat::json:
      out << dump_pretty(to_json(model)) << '\n';
      return;
    case OutputFormat::table:
    case OutputFormat::markdown:
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
    case OutputFormat::markdown:
      out << format_config_table(spec);
      return;
  }
}

namespace {

// A list of records and its summary, in jsonl (a line per item, then the summary's line) or json
// (one document: the list under `list_key`, then the summary's other fields; a count of the same
// name is replaced by the list itself).
struct ListRecords {
  const char* item_record;
  const char* list_key;
  const char* summary_record;
};

template <class Item, class Summary>
void write_list(std::ostream& out, const ListRecords& names, const std::vector<Item>& items,
                const Summary& summary, OutputFormat format) {
  if (format == OutputFormat::jsonl) {
    for (const auto& item : items)
      out << dump_record_line(names.item_record, to_json(item)) << '\n';
    out << dump_record_line(names.summary_record, to_json(summary)) << '\n';
    return;
  }
  Json doc;
  Json list = Json::array();
  for (const auto& item : items) list.push_back(to_json(item));
  doc[names.list_key] = std::move(list);
  const Json fields = to_json(summary);
  for (auto it = fields.begin(); it != fields.end(); ++it)
    if (it.key() != names.list_key) doc[it.key()] = *it;
  out << dump_pretty(doc) << '\n';
}

}  // namespace

void write_capture(std::ostream& out, const std::vector<TensorSnapshot>& snapshots,
                   const CaptureSummary& summary, OutputFormat format,
                   const ForwardSources* sources) {
  if (format == OutputFormat::table)
    out << format_capture_table(snapshots, summary, sources);
  else
    write_list(out, {"TensorSnapshot", "snapshots", "CaptureSummary"}, snapshots, summary, format);
}

void write_profile(std::ostream& out, const ProfileRecords& profile, OutputFormat format,
                   const ProfileTableLayout& layout) {
  if (format == OutputFormat::table) {
    out << format_profile_table(profile, layout);
    return;
  }
  if (format == OutputFormat::jsonl) {
    for (const auto& m : profile.modules)
      out << dump_record_line("ModuleProfile", to_json(m)) << '\n';
    for (const auto& o : profile.operators)
      out << dump_record_line("OperatorProfile", to_json(o)) << '\n';
    out << dump_record_line("ProfileSummary", to_json(profile.summary)) << '\n';
    return;
  }
  Json doc;
  doc["modules"] = Json::array();
  for (const auto& m : profile.modules) doc["modules"].push_back(to_json(m));
  doc["operators"] = Json::array();
  for (const auto& o : profile.operators) doc["operators"].push_back(to_json(o));
  const Json fields = to_json(profile.summary);
  for (auto it = fields.begin(); it != fields.end(); ++it)
    if (it.key() != "modules" && it.key() != "operators") doc[it.key()] = *it;
  out << dump_pretty(doc) << '\n';
}

void write_comparison(std::ostream& out, const CompareResult& result, OutputFormat format) {
  if (format == OutputFormat::table)
    out << format_comparison_table(result);
  else
    write_list(out, {"TensorComparison", "comparisons", "ComparisonSummary"}, result.comparisons,
               result.summary, format);
}

void write_diff(std::ostream& out, const RecordSet& old_set, const RecordSet& new_set,
                const std::vector<Change>& changes, const std::vector<std::string>& compared,
                OutputFormat format) {
  const Json summary = to_json(summarize(old_set, new_set, changes, compared));
  switch (format) {
    case OutputFormat::jsonl:
      for (const auto& c : changes) out << dump_record_line("Change", to_json(c)) << '\n';
      out << dump_record_line("DiffSummary", summary) << '\n';
      return;
    case OutputFormat::json: {
      Json doc = summary;
      Json list = Json::array();
      for (const auto& c : changes) list.push_back(to_json(c));
      doc["changes"] = std::move(list);
      out << dump_pretty(doc) << '\n';
      return;
    }
    case OutputFormat::table:
      out << format_diff_table(old_set, new_set, changes, compared);
      return;
    case OutputFormat::markdown:
      out << format_diff_markdown(old_set, new_set, changes, compared);
      return;
  }
}

}  // namespace vin::diagnostics
