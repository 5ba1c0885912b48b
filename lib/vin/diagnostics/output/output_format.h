// The three output formats of the command line, and the writers that print a record set in each.
#pragma once

#include <iosfwd>
#include <string>
#include <string_view>

#include <vector>

#include "vin/diagnostics/records/capture_records.h"
#include "vin/diagnostics/records/compare_records.h"
#include "vin/diagnostics/records/config_records.h"
#include "vin/diagnostics/json/diff_records.h"
#include "vin/diagnostics/records/model_metadata.h"
#include "vin/diagnostics/tables/command_tables.h"
#include "vin/diagnostics/records/profile_records.h"

namespace vin::diagnostics {

/// `jsonl`: one record a line; `json`: one indented document; `table`: for people.
/// markdown: diff's only (its command line offers it to no other command)
enum class OutputFormat { jsonl, json, table, markdown };

/// Parses "jsonl", "json", "table" or "markdown"; anything else is a UsageError.
OutputFormat parse_output_format(std::string_view name);

/// Writes inspect-model's records: ModelMetadata then one ModuleMetadata per module (jsonl), the
/// ModelMetadata document (json), or the module tree with totals (table). Ends with a newline.
void write_model_metadata(std::ostream& out, const ModelMetadata& model, OutputFormat format);

/// The ExportArchive record alone: what inspect-model prints of an archive it names but does
/// not describe (an AOTInductor package) before refusing it.
void write_export_archive(std::ostream& out, const ExportArchive& archive, OutputFormat format);

/// Writes inspect-config's records: ModelStructureSpec then one ConfigFieldSpec per field
/// (jsonl), the ModelStructureSpec document (json), or the field tree (table).
void write_structure_spec(std::ostream& out, const ModelStructureSpec& spec, OutputFormat format);

/// Writes capture's records: one TensorSnapshot line each then the CaptureSummary line (jsonl),
/// {"snapshots": [...], "sampled_bytes", "stopped_by"} (json), or one row per snapshot with
/// the summary underneath (table; with `sources` of several forwards, a column says which inputs
/// file each row came from). Ends with a newline.
void write_capture(std::ostream& out, const std::vector<TensorSnapshot>& snapshots,
                   const CaptureSummary& summary, OutputFormat format,
                   const ForwardSources* sources = nullptr);

/// Writes profile's records: one ModuleProfile line each, one OperatorProfile line each, then the
/// ProfileSummary line (jsonl); {"modules": [...], "operators": [...], <summary fields>} (json);
/// or the module tree, the operators that took the most time and the latency line (table).
/// `layout`: how the table is drawn (the JSON formats hold every record).
void write_profile(std::ostream& out, const ProfileRecords& profile, OutputFormat format,
                   const ProfileTableLayout& layout = {});

/// Writes compare's records: one "TensorComparison" line each then a "ComparisonSummary" line
/// (jsonl), one document with "comparisons" (json), or the first divergence and the worst pairs
/// first (table).
void write_comparison(std::ostream& out, const CompareResult& result, OutputFormat format);

/// Writes diff's records: one "Change" line each then a "DiffSummary" line (jsonl), one document
/// (json), or a readable summary with +, -, ~ marks (table). `compared`: the kinds of records
/// compared (DiffSummary's `compared`).
void write_diff(std::ostream& out, const RecordSet& old_set, const RecordSet& new_set,
                const std::vector<Change>& changes, const std::vector<std::string>& compared,
                OutputFormat format);

}  // namespace vin::diagnostics
