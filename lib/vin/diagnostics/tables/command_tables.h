// Each command's table for people (`--format table`), one file each (model_table.cpp,
// config_table.cpp, capture_table.cpp, compare_table.cpp, profile_table.cpp, diff_table.cpp),
// drawn with the engine of text_table.h and the columns of table_views.h.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "vin/diagnostics/json/diff_records.h"
#include "vin/diagnostics/records/capture_records.h"
#include "vin/diagnostics/records/compare_records.h"
#include "vin/diagnostics/records/config_records.h"
#include "vin/diagnostics/records/model_metadata.h"
#include "vin/diagnostics/records/profile_records.h"

namespace vin::diagnostics {

/// An ExportArchive's lines: layout and versions, an AOTInductor package's compiled models.
std::string format_export_archive_table(const ExportArchive& archive);

/// inspect-model for people: the module tree indented by depth with type, direct parameters,
/// trainable parameters, buffers and mode, then the model totals (model_table.cpp).
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

/// The width profile's table fits when not told the terminal's (COLUMNS).
inline constexpr std::size_t kProfileTableWidth = 100;

/// How profile's table is drawn.
struct ProfileTableLayout {
  /// --depth: modules deeper than this (the root 0, its children 1, ...) are folded into their
  /// ancestor shown, whose self time then holds their time; nothing: every module
  std::optional<std::int64_t> depth;
  /// the lines' width to fit (labels and shapes cut where they must be)
  std::size_t width = kProfileTableWidth;
};

/// profile for people, as torchinfo draws a model: the module tree with output shape, parameters,
/// FLOPs, self and total time, share of the instrumented forward and peak memory, then why a
/// module has no rows under it where its children were not called; then the operators that took
/// the most time (kProfileTableOperators at most) with their MACs and self time; then the latency
/// line and the totals.
std::string format_profile_table(const ProfileRecords& profile,
                                 const ProfileTableLayout& layout = {});
inline constexpr std::size_t kProfileTableOperators = 15;
/// Modules whose uncalled children the table explains, at most (the records list every one).
inline constexpr std::size_t kProfileTableNotes = 5;

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
