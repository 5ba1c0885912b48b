// scan: would loading these files run code? An allow-list verdict (docs/safety.md, scan).
#include <algorithm>

#include "../command.h"
#include "../outputs.h"
#include "vin/diagnostics/output/scan_output.h"
#include "vin/diagnostics/scan/file_scan.h"

namespace vd = vin::diagnostics;

namespace vin::cli {
namespace {

class Scan : public Command {
 public:
  Scan()
      : Command({"scan", nullptr,
                 "Tell whether loading model files would run code: every pickle walked, never "
                 "run, against torch's weights_only allow-list (exit 1: runs code)",
                 "vin-inspect scan downloads/ --format table", 2}) {}

  void define(CLI::App& sub) override {
    sub.add_option("PATH", paths_,
                   "Model files or directories (recursively): pickles, torch.save files, "
                   "TorchScript and .pt2 archives, safetensors, .npy/.npz, zips and tars")
        ->required();
    sub.add_option("--allow", allow_,
                   "Also allow this global (module.qualname), as "
                   "torch.serialization.add_safe_globals does (repeatable; never os, posix, nt, "
                   "sys, subprocess or builtins.eval, exec, compile, getattr, __import__)")
        ->type_name("NAME");
    output_.add(sub, /*markdown=*/true);
  }

  int run() override {
    vd::AllowList allowed;
    for (const std::string& name : allow_) allowed.allow(name);
    std::vector<vd::NamedPath> inputs;
    for (const std::string& path : paths_) inputs.push_back({"PATH", path});
    vd::OutputPlan plan = plan_outputs(output_, inputs);
    std::vector<vd::ScannedFile> files;
    for (const std::string& path : vd::scan_targets(paths_)) {
      vd::FileScan scanned = vd::scan_file(path, allowed);
      files.push_back({std::move(scanned.summary), std::move(scanned.findings)});
    }
    write_records(plan, paths_.front(), [&](std::ostream& out) {
      vd::write_scan(out, files, output_.parsed_format());
    });
    plan.commit();
    const auto any = [&](const char* verdict) {
      return std::any_of(files.begin(), files.end(),
                         [&](const vd::ScannedFile& f) { return f.summary.verdict == verdict; });
    };
    return any("runs-code") ? 1 : any("cannot-judge") || files.empty() ? 2 : 0;
  }

 private:
  std::vector<std::string> paths_;
  std::vector<std::string> allow_;
  OutputOptions output_;
};

}  // namespace

std::unique_ptr<Command> scan_command() { return std::make_unique<Scan>(); }

}  // namespace vin::cli
