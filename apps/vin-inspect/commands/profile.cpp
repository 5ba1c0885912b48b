// profile: what a forward costs, per module and per operator (docs/profile.md).
#include <spdlog/spdlog.h>

#include <iostream>

#include "../command.h"
#include "../outputs.h"
#include "../progress_line.h"
#include "../torch_access.h"
#include "vin/diagnostics/formats/file_format.h"
#include "vin/diagnostics/profile/chrome_trace.h"
#include "vin/diagnostics/text/printable.h"

namespace vd = vin::diagnostics;

namespace vin::cli {

/// What a command hands over to be destroyed by the process's end (main.cpp's leave()).
std::vector<std::shared_ptr<void>>& left_to_the_exit();

namespace {

class Profile : public Command {
 public:
  Profile()
      : Command({"profile", nullptr,
                 "Time a forward and attribute its time, FLOPs and memory to each module and "
                 "operator",
                 "vin-inspect profile net.pt --shape x=1x3x224x224 --format table"}) {}

  void define(CLI::App& sub) override {
    sub.add_option("ARCHIVE", request_.run.archive,
                   "The model file: " + vd::formats_serving(vd::kRun | vd::kRunProgram) +
                       " (docs/export.md: run by this tool's interpreter of the exported graph)")
        ->required();
    run_.add(sub, "Inputs for the forward: one .npz, .npy or torch.save file",
             "an error, and no records");
    add_device(sub, "--device", request_.run.device,
               "Where the archive is loaded and inputs placed (default cpu; cuda, cuda:N; meta: "
               "shapes only)");
    add_modules(sub, modules_,
                "Registered path or pattern to report, e.g. layer1.* (repeatable; default: every "
                "module)");
    add_integer(sub, "--warmup", request_.warmup, 0, vd::kMaxProfileRuns,
                "Forwards run first and not measured");
    add_integer(sub, "--runs", request_.runs, 1, vd::kMaxProfileRuns, "Timed forwards");
    add_integer(sub, "--threads", request_.threads, 1, vd::kMaxProfileThreads,
                "LibTorch's intra-op threads for every forward (the summary records the threads "
                "it ran with)",
                "LibTorch's own choice");
    sub.add_flag("--nested-operators", request_.nested_operators,
                 "OperatorProfile records of every operator call, those dispatched from another "
                 "operator too (as torch.profiler's table), not only the outermost");
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
    request_.module_paths = selected_modules(modules_);
    run_.apply_to(request_.run);
    vd::OutputPlan plan = plan_outputs(
        output_, run_.named_inputs({{"ARCHIVE", request_.run.archive}}), {{"--trace", trace_}});
    request_.trace = trace_.has_value();
    ProgressLine progress;
    request_.on_progress = [&progress](vd::ProfilePhase phase, std::int64_t done,
                                       std::int64_t total) { progress.show(phase, done, total); };
    // a forward past --timeout that cannot be stopped (from the plugin's watchdog thread, which
    // then ends the process)
    request_.on_abandoned = [&](const std::string& message) {
      progress.clear();
      plan.discard();
      std::cerr << "vin-inspect: error: " << vd::printable(message, 2000) << "\n";
    };
    name_unrunnable_files({request_.run.archive}, /*saved_tensors=*/false, /*programs=*/true);
    const vd::ProfileResult result = torch_plugin().profile_archive(request_);
    left_to_the_exit().push_back(result.models);
    request_.on_progress = nullptr;
    progress.clear();
    if (!result.error_report.empty())
      spdlog::debug("the TorchScript interpreter's report:\n{}", result.error_report);
    if (result.error) throw vd::Error(*result.error);
    for (const std::string& warning : result.records.summary.warnings) spdlog::warn("{}", warning);
    if (request_.trace)
      vd::write_output(
          plan.destination("--trace"),
          vd::chrome_trace_json(result.spans, result.memory, request_.run.archive,
                                result.records.summary));
    write_records(plan, request_.run.archive, [&](std::ostream& out) {
      vd::write_profile(out, result.records, output_.parsed_format(),
                        {depth_, output_.table_width(vd::kProfileTableWidth)});
    });
    plan.commit();
    return 0;
  }

 private:
  vd::ProfileRequest request_;
  RunOptions run_;
  std::vector<std::string> modules_;
  std::optional<std::string> trace_;
  static constexpr std::int64_t kMaxDepth = 10000;
  std::optional<std::int64_t> depth_;
  OutputOptions output_;
};

}  // namespace

std::unique_ptr<Command> profile_command() { return std::make_unique<Profile>(); }

}  // namespace vin::cli
