// Plain-text tables for people (`--format table`): aligned columns, thousands separators.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "vin/diagnostics/records/capture_records.h"
#include "vin/diagnostics/records/config_records.h"
#include "vin/diagnostics/records/diff_records.h"
#include "vin/diagnostics/records/model_metadata.h"
#include "vin/diagnostics/records/profile_records.h"

namespace vin::diagnostics {

/// `text` cut to `width` display columns, its end replaced by "...".
std::string cut_to(const std::string& text, std::size_t width);

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

  /// A column that fit() may narrow, down to `min_width` (at least its header's). `cut`: how a
  /// cell is cut to a width (nothing: its end replaced by "...").
  struct Shrinkable {
    std::size_t column;
    std::size_t min_width;
    std::string (*cut)(const std::string& cell, std::size_t width) = nullptr;
  };
  /// Narrows the table towards `max_width` (the rows added so far): the shrinkable column with
  /// the most width to give loses a character at a time until the lines fit or none has any
  /// left; the cells wider than their column are then cut, ending in "...". Returns how many
  /// cells were cut.
  std::size_t fit(std::size_t max_width, const std::vector<Shrinkable>& shrinkable);

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
