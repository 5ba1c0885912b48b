#include "vin/diagnostics/profile/chrome_trace.h"

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "vin/diagnostics/json/json_encoding.h"

namespace vin::diagnostics {
namespace {

constexpr int kProcess = 1;
constexpr int kForwardThread = 1;  // the instrumented forward
constexpr int kRunsThread = 2;     // the warm-up and timed forwards

const char* category(ProfileSpan::Kind kind) {
  switch (kind) {
    case ProfileSpan::Kind::module: return "module";
    case ProfileSpan::Kind::op: return "operator";
    case ProfileSpan::Kind::sync: return "synchronize";
    case ProfileSpan::Kind::run: return "forward";
  }
  return "";
}

// a span's thread: the instrumented forward's slices on one, the plain forwards on the other
int thread_of(const ProfileSpan& span) {
  return span.kind == ProfileSpan::Kind::run && span.name != kInstrumentedForward ? kRunsThread
                                                                                  : kForwardThread;
}

// Milliseconds as whole nanoseconds, the trace's resolution (Perfetto keeps nanoseconds): a
// slice's end is rounded, not its duration, so that a slice inside another ends inside it.
std::int64_t nanoseconds(double ms) { return std::llround(ms * 1e6); }
// ... written in microseconds a quarter nanosecond above, so that an importer truncating
// value * 1000 (Perfetto's) reads the nanosecond back: ns / 1000 alone is read 1 ns short for
// some values (1001 ns: 1.001 * 1000 = 1000.9999...)
double microseconds(std::int64_t ns) { return (static_cast<double>(ns) + 0.25) / 1000; }

Json metadata(const char* name, int tid, const std::string& value) {
  Json event;
  event["name"] = name;
  event["ph"] = "M";
  event["pid"] = kProcess;
  event["tid"] = tid;
  event["args"] = Json::object({{"name", value}});
  return event;
}

Json slice(const ProfileSpan& span) {
  Json event;
  event["name"] = span.name;
  event["cat"] = category(span.kind);
  event["ph"] = "X";
  const std::int64_t start = nanoseconds(span.start_ms);
  event["ts"] = microseconds(start);
  event["dur"] = microseconds(nanoseconds(span.start_ms + span.duration_ms) - start);
  event["pid"] = kProcess;
  event["tid"] = thread_of(span);
  if (span.kind == ProfileSpan::Kind::module || span.kind == ProfileSpan::Kind::op) {
    Json args;
    if (span.kind == ProfileSpan::Kind::module) args["module_type"] = span.type;
    args["input_shapes"] = span.input_shapes;
    if (span.kind == ProfileSpan::Kind::module) args["output_shapes"] = span.output_shapes;
    args["flops"] = flops_json(span.flops);
    event["args"] = std::move(args);
  }
  return event;
}

}  // namespace

std::string chrome_trace_json(const std::vector<ProfileSpan>& spans,
                              const std::vector<MemorySample>& memory,
                              const std::string& archive, const ProfileSummary& summary) {
  std::vector<const ProfileSpan*> order;
  order.reserve(spans.size());
  for (const auto& span : spans) order.push_back(&span);
  // by start; at one start the longer first (a module and its first operator can start
  // together), then the enclosing kind first (the instrumented forward, a module, an operator)
  std::stable_sort(order.begin(), order.end(), [](const ProfileSpan* a, const ProfileSpan* b) {
    if (a->start_ms != b->start_ms) return a->start_ms < b->start_ms;
    if (a->duration_ms != b->duration_ms) return a->duration_ms > b->duration_ms;
    const auto rank = [](const ProfileSpan* s) {
      return s->kind == ProfileSpan::Kind::run ? 0 : s->kind == ProfileSpan::Kind::module ? 1 : 2;
    };
    return rank(a) < rank(b);
  });
  std::vector<MemorySample> samples = memory;
  std::stable_sort(samples.begin(), samples.end(),
                   [](const MemorySample& a, const MemorySample& b) { return a.ms < b.ms; });

  std::string out = "{\"traceEvents\": [\n";
  auto add = [&out, first = true](const Json& event) mutable {
    out += (first ? "" : ",\n") + dump_line(event);
    first = false;
  };
  add(metadata("process_name", kForwardThread, "vin-inspect profile " + archive));
  add(metadata("thread_name", kForwardThread, "instrumented forward"));
  add(metadata("thread_name", kRunsThread, "warm-up and timed forwards"));
  for (const ProfileSpan* span : order) add(slice(*span));
  for (const MemorySample& sample : samples) {
    Json event;
    event["name"] = "live bytes";
    event["ph"] = "C";
    event["ts"] = microseconds(nanoseconds(sample.ms));
    event["pid"] = kProcess;
    event["args"] = Json::object({{"bytes", sample.live_bytes}});
    add(event);
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
