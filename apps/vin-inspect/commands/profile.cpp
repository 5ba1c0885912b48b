// profile: what a forward costs, per module and per operator (docs/profile.md).
#include "../command.h"
#include "../outputs.h"
#include "../profile_run.h"
#include "vin/diagnostics/formats/file_format.h"
#include "vin/diagnostics/profile/chrome_trace.h"

namespace vd = vin::diagnostics;

namespace vin::cli {

namespace {

class Profile : public Command {
 public:
  Profile()
      : Command({"profile", nullptr,
                 "Time a forward and attribute its time, FLOPs and memory to each module and "
                 "operator",
                 "vin-inspect profile net.pt --shape x=1x3x224x224 --format table"}) {}

  void define(CLI::App& sub) override {
    sub.add_option("ARCHIVE", archive_,
                   "The model file: " + vd::formats_serving(vd::kRun | vd::kRunProgram) +
                       " (docs/export.md: run by this tool's interpreter of the exported graph)")
        ->required();
    run_.add_inputs(sub);
    add_modules(sub, modules_,
                "Registered path or pattern to report, e.g. layer1.* (repeatable; default: every "
                "module)");
    run_.add_timing(sub);
    add_integer(sub, "--depth", depth_, 0, kMaxDepth,
                "With --format table: fold modules deeper than N (the root 0) into their "
                "ancestors, as torchinfo's depth",
                "every module");
    sub.add_option("--trace", trace_,
                   "Also write the instrumented forward as Chrome trace events (Perfetto, "
                   "chrome://tracing open it)")
        ->type_name("FILE.json");
    output_.add(sub);
  }

  int run() override {
    if (depth_ && output_.parsed_format() != vd::OutputFormat::table)
      throw vd::UsageError(
          "--depth: folds the rows of --format table; the records keep every module (--module "
          "selects them)");
    run_.request.module_paths = selected_modules(modules_);
    run_.request.trace = trace_.has_value();
    run_.prepare();
    vd::OutputPlan plan = plan_outputs(
        output_, run_.run.named_inputs({{"ARCHIVE", archive_}}), {{"--trace", trace_}});
    const vd::ProfileResult result = run_.profile(archive_, plan);
    if (run_.request.trace)
      vd::write_output(plan.destination("--trace"),
                       vd::chrome_trace_json(result.spans, result.memory, archive_,
                                             result.records.summary));
    write_records(plan, archive_, [&](std::ostream& out) {
      vd::write_profile(out, result.records, output_.parsed_format(),
                        {depth_, output_.table_width(vd::kProfileTableWidth)});
    });
    plan.commit();
    return 0;
  }

 private:
  std::string archive_;
  ProfileRun run_;
  std::vector<std::string> modules_;
  std::optional<std::string> trace_;
  static constexpr std::int64_t kMaxDepth = 10000;
  std::optional<std::int64_t> depth_;
  OutputOptions output_;
};

}  // namespace

std::unique_ptr<Command> profile_command() { return std::make_unique<Profile>(); }

}  // namespace vin::cli
