// capture: bounded samples of what enters and leaves every module call, from inside TorchScript
// (docs/capture.md).
#include <spdlog/spdlog.h>

#include <iostream>

#include "../command.h"
#include "../outputs.h"
#include "../torch_access.h"
#include "vin/diagnostics/formats/file_format.h"
#include "vin/diagnostics/text/printable.h"

namespace vd = vin::diagnostics;

namespace vin::cli {
namespace {

class Capture : public Command {
 public:
  Capture()
      : Command({"capture", nullptr,
                 "Run the forward on inputs and record bounded samples of what enters and leaves "
                 "each module",
                 "vin-inspect capture net.pt --inputs batch.npz --module blocks.0 --format "
                 "table"}) {}

  void define(CLI::App& sub) override {
    sub.add_option("ARCHIVE", request_.run.archive,
                   "The model file: " + vd::formats_serving(vd::kRun | vd::kRunProgram) +
                       " (docs/export.md: run by this tool's interpreter of the exported graph)")
        ->required();
    run_.add(sub,
             "Inputs for one forward: .npz, .npy or torch.save file (repeatable; one forward per "
             "file, in order)");
    add_device(sub, "--device", request_.run.device,
               "Where the archive is loaded and inputs placed (default cpu; cuda, cuda:N; meta: "
               "shapes only)");
    sub.add_option("--save", save_,
                   "Also write each recorded snapshot's whole tensor to FILE.npz (numpy.load "
                   "reads it)")
        ->type_name("FILE.npz");
    add_integer(sub, "--save-max-bytes", request_.save_max_bytes, 1, vd::kMaxSaveBytes,
                "Tensor bytes --save writes at most; tensors past it are counted, not written");
    add_modules(sub, modules_,
                "Registered path to capture, e.g. blocks.0.lin or <root> (repeatable; default: "
                "every module)");
    add_integer(sub, "--max-tensors", quotas_.max_tensors, 1, kNoUpperBound,
                "Snapshots kept in all");
    add_integer(sub, "--max-samples-per-tensor", quotas_.max_samples_per_tensor, 1, kNoUpperBound,
                "Values copied per tensor");
    add_integer(sub, "--max-bytes", quotas_.max_bytes, 1, kNoUpperBound,
                "Source-dtype bytes copied in all");
    add_walk_limits(sub, quotas_.max_traversal_nodes, quotas_.max_container_depth);
    sub.add_flag("--stats", request_.stats,
                 "Add statistics over each whole tensor and report the first non-finite one");
    sub.add_flag("--fail-on-nonfinite", fail_on_nonfinite_,
                 "Exit with status 3 when a tensor holds a NaN or an infinity (implies --stats)");
    output_.add(sub);
  }

  int run() override {
    request_.module_paths = selected_modules(modules_);
    run_.apply_to(request_.run);
    vd::OutputPlan plan = plan_outputs(
        output_, run_.named_inputs({{"ARCHIVE", request_.run.archive}}), {{"--save", save_}});
    if (save_) {
      request_.save = plan.destination("--save");
    }
    if (fail_on_nonfinite_) request_.stats = true;
    request_.limits = vd::CaptureLimits(quotas_);
    spdlog::debug("capturing {} on {} input file(s)", request_.run.archive,
                  request_.run.inputs.size());
    const auto print = [&](const vd::CaptureResult& result) {
      write_records(plan, request_.run.archive, [&](std::ostream& out) {
        vd::write_capture(out, result.snapshots, result.summary, output_.parsed_format(),
                          &result.sources);
      });
    };
    // a forward past --timeout that cannot be stopped: the records so far (on standard output;
    // a file output of a failed command is removed), the message, the end (from the plugin's
    // watchdog thread, which then ends the process)
    request_.on_abandoned = [&](const vd::CaptureResult& result) {
      try {
        print(result);
      } catch (const vd::Error&) {
      }
      plan.discard();
      std::cerr << "vin-inspect: error: " << vd::printable(*result.error, 2000) << "\n";
    };
    name_unrunnable_files({request_.run.archive}, /*saved_tensors=*/false, /*programs=*/true);
    const vd::CaptureResult result = torch_plugin().capture_archive(request_);
    // the records of a forward that raised are printed too (what ran before it is the point of
    // capturing); written to a file, they go with the failed command's other files
    print(result);
    if (!result.error_report.empty())
      spdlog::debug("the TorchScript interpreter's report:\n{}", result.error_report);
    if (result.error) throw vd::Error(*result.error);
    plan.commit();
    return fail_on_nonfinite_ && result.summary.first_nonfinite ? 3 : 0;
  }

 private:
  vd::CaptureRequest request_;
  RunOptions run_;
  std::vector<std::string> modules_;
  vd::CaptureQuotas quotas_;  // the defaults
  std::optional<std::string> save_;
  bool fail_on_nonfinite_ = false;
  OutputOptions output_;
};

}  // namespace

std::unique_ptr<Command> capture_command() { return std::make_unique<Capture>(); }

}  // namespace vin::cli
