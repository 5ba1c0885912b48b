// The three output formats of the command line, and the writers that print a record set in each.
#pragma once

#include <iosfwd>
#include <string>
#include <string_view>

#include "vin/diagnostics/model_metadata.h"

namespace vin::diagnostics {

/// `jsonl`: one record a line; `json`: one indented document; `table`: for people.
enum class OutputFormat { jsonl, json, table };

/// Parses "jsonl", "json" or "table"; anything else is a UsageError.
OutputFormat parse_output_format(std::string_view name);

/// Writes inspect-model's records: ModelMetadata then one ModuleMetadata per module (jsonl), the
/// ModelMetadata document (json), or the module tree with totals (table). Ends with a newline.
void write_model_metadata(std::ostream& out, const ModelMetadata& model, OutputFormat format);

}  // namespace vin::diagnostics
