#include "profile_run.h"

#include <spdlog/spdlog.h>

#include <iostream>

#include "progress_line.h"
#include "torch_access.h"
#include "vin/diagnostics/formats/file_format.h"
#include "vin/diagnostics/text/printable.h"

namespace vd = vin::diagnostics;

namespace vin::cli {

/// What a command hands over to be destroyed by the process's end (main.cpp's leave()).
std::vector<std::shared_ptr<void>>& left_to_the_exit();

void ProfileRun::add_inputs(CLI::App& sub) {
  run.add(sub, "Inputs for the forward: one .npz, .npy or torch.save file",
          "an error, and no records");
  add_device(sub, "--device", request.run.device,
             "Where the archive is loaded and inputs placed (default cpu; cuda, cuda:N; meta: "
             "shapes only)");
}

void ProfileRun::add_timing(CLI::App& sub) {
  add_integer(sub, "--warmup", request.warmup, 0, vd::kMaxProfileRuns,
              "Forwards run first and not measured");
  add_integer(sub, "--runs", request.runs, 1, vd::kMaxProfileRuns, "Timed forwards");
  add_integer(sub, "--threads", request.threads, 1, vd::kMaxProfileThreads,
              "LibTorch's intra-op threads for every forward (the summary records the threads "
              "it ran with)",
              "LibTorch's own choice");
  sub.add_flag("--nested-operators", request.nested_operators,
               "OperatorProfile records of every operator call, those dispatched from another "
               "operator too (as torch.profiler's table), not only the outermost");
}

vd::ProfileResult ProfileRun::profile(const std::string& archive, vd::OutputPlan& plan) {
  request.run.archive = archive;
  ProgressLine progress;
  request.on_progress = [&progress](vd::ProfilePhase phase, std::int64_t done,
                                    std::int64_t total) { progress.show(phase, done, total); };
  // a forward past --timeout that cannot be stopped (from the plugin's watchdog thread, which
  // then ends the process)
  request.on_abandoned = [&](const std::string& message) {
    progress.clear();
    plan.discard();
    std::cerr << "vin-inspect: error: " << vd::printable(message, 2000) << "\n";
  };
  name_unrunnable_files({archive}, /*saved_tensors=*/false, /*programs=*/true);
  vd::ProfileResult result = torch_plugin().profile_archive(request);
  left_to_the_exit().push_back(result.models);
  request.on_progress = nullptr;
  request.on_abandoned = nullptr;
  progress.clear();
  if (!result.error_report.empty())
    spdlog::debug("the TorchScript interpreter's report:\n{}", result.error_report);
  if (result.error) throw vd::Error(*result.error);
  for (const std::string& warning : result.records.summary.warnings) spdlog::warn("{}", warning);
  return result;
}

}  // namespace vin::cli
