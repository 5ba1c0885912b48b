// scan's records in each format (contract 14.2): per file its ScanFinding lines then its
// ScanSummary line (jsonl); {"summaries": [...], "findings": [...]} (json); one line per file
// with its verdict, format and first finding, then the findings (table); a summary line and two
// GitHub-flavoured tables, every name a code span, under 1,000,000 bytes (markdown).
#pragma once

#include <ostream>
#include <vector>

#include "vin/diagnostics/output/output_format.h"
#include "vin/diagnostics/records/file_records.h"

namespace vin::diagnostics {

/// One file's records.
struct ScannedFile {
  ScanSummary summary;
  std::vector<ScanFinding> findings;
};

/// Writes `files` in `format`. Ends with a newline.
void write_scan(std::ostream& out, const std::vector<ScannedFile>& files, OutputFormat format);

}  // namespace vin::diagnostics
