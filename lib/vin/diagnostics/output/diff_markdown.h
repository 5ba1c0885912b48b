// diff's `--format markdown` (contract 9.4): a summary line and one GitHub-flavoured table of the
// changes, to paste where reviewers look ($GITHUB_STEP_SUMMARY, a merge-request note). Every text
// from the records is a code span, escaped so that nothing in a model's names is read as
// Markdown, HTML, a link or a mention; more than 50 changes fold into one <details> block; the
// whole stays under 1,000,000 bytes (GitHub's step summary takes 1 MiB).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "vin/diagnostics/json/diff_records.h"

namespace vin::diagnostics {

/// The changes past which the table is folded, and the bound of the whole output.
inline constexpr std::size_t kMarkdownFoldAfter = 50;
inline constexpr std::size_t kMarkdownMaxBytes = 1000000;

/// `text` as one Markdown code span that a table cell holds whole, on one line: `|` as `\|`, a
/// backslash as `\\`, newline, CR, tab and other control characters (C0, DEL, C1) and U+2028,
/// U+2029 as `\n`, `\r`, `\t`, `\uXXXX`, a byte that is not UTF-8 as `\udcXX`, fenced by more
/// backticks than any run inside it.
std::string markdown_code(const std::string& text);

/// A JSON text (dump_line's: ASCII, its control characters escaped) as one code span: its
/// escapes kept, which are markdown_code's own (`\n`, `\\`, `\uXXXX`; `\b`, `\f` as `\uXXXX`),
/// so a newline in a value shows as `\n` as in a name; `|` as `\|`.
std::string markdown_json_code(const std::string& json);

/// The summary line, the table (folded past kMarkdownFoldAfter changes) and, where the bound
/// cut it, a line saying how many changes were left out. Ends with a newline.
std::string format_diff_markdown(const RecordSet& old_set, const RecordSet& new_set,
                                 const std::vector<Change>& changes,
                                 const std::vector<std::string>& compared);

}  // namespace vin::diagnostics
