// Plain-text tables for people (`--format table`): aligned columns, thousands separators.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "vin/diagnostics/records/capture_records.h"
#include "vin/diagnostics/records/config_records.h"
#include "vin/diagnostics/records/diff_records.h"
#include "vin/diagnostics/records/model_metadata.h"
#include "vin/diagnostics/records/profile_records.h"

namespace vin::diagnostics {

/// 1234567 -> "1,234,567"; negative numbers keep their sign.
std::string with_thousands_separators(std::int64_t value);

/// Columns of text, each left- or right-aligned, padded to the widest cell.
class TextTable {
 public:
  enum class Align { left, right };

  void add_column(std::string header, Align align);
  /// A row with one cell per column (missing cells are blank).
  void add_row(std::vector<std::string> cells);
  /// Header, a rule, the rows; lines joined by '\n', each without trailing blanks.
  std::string render() const;
  /// Width of the rendered lines (for rules drawn around the table).
  std::size_t width() const;

 private:
  std::vector<std::size_t> column_widths() const;

  std::vector<std::string> headers_;
  std::vector<Align> aligns_;
  std::vector<std::vector<std::string>> rows_;
};

/// inspect-model for people: the module tree indented by depth with type, direct parameters,
/// trainable parameters, buffers and mode, then the model totals.
/// An ExportArchive's lines: layout and versions, an AOTInductor package's compiled models.
std::string format_export_archive_table(const ExportArchive& archive);

std::string format_model_table(const ModelMetadata& model);

/// inspect-config for people: the field tree indented by depth with declared type, configured
/// type and value.
std::string format_config_table(const ModelStructureSpec& spec);

/// capture for people: one row per snapshot (module path, call, direction, tensor path, shape,
/// dtype, first values; with `sources` of several forwards first the inputs file), then the
/// summary.
std::string format_capture_table(const std::vector<TensorSnapshot>& snapshots,
                                 const CaptureSummary& summary,
                                 const ForwardSources* sources = nullptr);

/// profile for people, as torchinfo draws a model: the module tree with output shape, parameters,
/// FLOPs, time and share of the instrumented forward and peak memory; then the operators that
/// took the most time (kProfileTableOperators at most); then the latency line and the totals.
std::string format_profile_table(const ProfileRecords& profile);
inline constexpr std::size_t kProfileTableOperators = 15;

/// 1234 -> "1.23 K", 5600000000 -> "5.60 G": a count with an SI suffix (below 1000 as it is).
std::string si_count(std::int64_t value);
/// A count of FLOPs so: exact past 64 bits, "overflow" past 2^127 (flop_count.h).
std::string si_count(FlopCount value);

/// compare for people: the first divergence, then the pairs beyond tolerance (worst first, by
/// mismatching share then error), one-sided tensors, and the counts.
std::string format_comparison_table(const CompareResult& result);

/// diff for people: the sides' names, one line per change marked +, - or ~, then the counts.
std::string format_diff_table(const RecordSet& old_set, const RecordSet& new_set,
                              const std::vector<Change>& changes,
                              const std::vector<std::string>& compared);

}  // namespace vin::diagnostics
