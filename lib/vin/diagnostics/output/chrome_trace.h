// profile --trace: the instrumented forward as Chrome trace events (the JSON Object Format that
// Perfetto and chrome://tracing open): a complete ("X") event per module call and per operator
// call the code made, in microseconds from the forward's start, with shapes and FLOPs as args.
#pragma once

#include <string>
#include <vector>

#include "vin/diagnostics/records/profile_records.h"

namespace vin::diagnostics {

/// The trace document of `spans` (one line per event, sorted by start, an enclosing span before
/// the spans it holds); `archive` and the summary's device go in its metadata.
std::string chrome_trace_json(const std::vector<ProfileSpan>& spans, const std::string& archive,
                              const ProfileSummary& summary);

}  // namespace vin::diagnostics
