// profile --trace: a profile's timeline as Chrome trace events (the JSON Object Format that
// Perfetto and chrome://tracing open), in microseconds from the first forward's start:
// - process 1 ("vin-inspect profile ARCHIVE") with two named threads (metadata events):
//   thread 1, "instrumented forward": the instrumented forward as one slice, inside it a complete
//   ("X") event per module call and per operator call (shapes and FLOPs as args), and on CUDA
//   each device synchronisation the profile made;
//   thread 2, "warm-up and timed forwards": a slice per warm-up and timed forward;
// - a counter track ("C" events), "live bytes": the instrumented forward's allocated bytes after
//   each allocation and free.
#pragma once

#include <string>
#include <vector>

#include "vin/diagnostics/records/profile_records.h"

namespace vin::diagnostics {

/// The trace document of `spans` and `memory` (one line per event: the metadata first, then the
/// slices sorted by start with an enclosing span before the spans it holds, then the counter's
/// samples by time); `archive` and the summary's device go in its metadata.
std::string chrome_trace_json(const std::vector<ProfileSpan>& spans,
                              const std::vector<MemorySample>& memory,
                              const std::string& archive, const ProfileSummary& summary);

}  // namespace vin::diagnostics
