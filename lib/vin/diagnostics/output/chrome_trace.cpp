#include "vin/diagnostics/output/chrome_trace.h"

#include <algorithm>

#include "vin/diagnostics/records/json_encoding.h"

namespace vin::diagnostics {

std::string chrome_trace_json(const std::vector<ProfileSpan>& spans, const std::string& archive,
                              const ProfileSummary& summary) {
  std::vector<const ProfileSpan*> order;
  order.reserve(spans.size());
  for (const auto& span : spans) order.push_back(&span);
  // by start; at one start the longer first (a module and its first operator can start together)
  std::stable_sort(order.begin(), order.end(), [](const ProfileSpan* a, const ProfileSpan* b) {
    if (a->start_ms != b->start_ms) return a->start_ms < b->start_ms;
    if (a->duration_ms != b->duration_ms) return a->duration_ms > b->duration_ms;
    return a->kind == ProfileSpan::Kind::module && b->kind != ProfileSpan::Kind::module;
  });
  std::string out = "{\"traceEvents\": [\n";
  bool first = true;
  for (const ProfileSpan* span : order) {
    const bool module = span->kind == ProfileSpan::Kind::module;
    Json event;
    event["name"] = span->name;
    event["cat"] = module ? "module" : "operator";
    event["ph"] = "X";
    event["ts"] = span->start_ms * 1000;
    event["dur"] = span->duration_ms * 1000;
    event["pid"] = 1;
    event["tid"] = 1;
    Json args;
    if (module) args["module_type"] = span->type;
    args["input_shapes"] = span->input_shapes;
    if (module) args["output_shapes"] = span->output_shapes;
    args["flops"] = flops_json(span->flops);
    event["args"] = std::move(args);
    out += (first ? "" : ",\n") + dump_line(event);
    first = false;
  }
  Json other;
  other["archive"] = archive;
  other["device"] = summary.device;
  other["flops"] = flops_json(summary.flops);
  other["instrumented_ms"] = summary.instrumented_ms;
  out += "\n], \"displayTimeUnit\": \"ms\", \"otherData\": " + dump_line(other) + "}\n";
  return out;
}

}  // namespace vin::diagnostics
