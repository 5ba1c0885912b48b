// diff: what changed between two models, configurations or profiles (docs/records.md, diff).
#include <algorithm>

#include "../command.h"
#include "../outputs.h"
#include "../torch_access.h"
#include "vin/diagnostics/diff/record_sources.h"

namespace vd = vin::diagnostics;

namespace vin::cli {
namespace {

class Diff : public Command {
 public:
  Diff()
      : Command({"diff", nullptr,
                 "Compare two models, configurations or profiles: archives, YAML renderings or "
                 "saved jsonl records",
                 "vin-inspect diff yesterday.jsonl net.pt --ignore training", 2}) {}

  void define(CLI::App& sub) override {
    sub.add_option("OLD", old_path_,
                   "Archive, YAML rendering, or the jsonl/json inspect-model, inspect-config or "
                   "profile wrote")
        ->required();
    sub.add_option("NEW", new_path_, "The same kind of file to compare with")->required();
    sub.add_option("--ignore", ignore_,
                   "A record field not to compare, e.g. training or storage_crc32 (repeatable)")
        ->type_name("FIELD");
    sub.add_option("--only", only_,
                   "Compare only this field (repeatable); added and removed records still count")
        ->type_name("FIELD");
    sub.add_option("--tolerance", tolerances_,
                   "FIELD=LIMIT: a numeric change within LIMIT (5%, +5%, -10%, 600) is reported "
                   "but does not make the exit status 1 (repeatable: one limit per field, or one "
                   "+ and one -)")
        ->type_name("FIELD=LIMIT");
    sub.add_option("--strip-prefix", strip_prefixes_,
                   "Take PREFIX off the module paths and tensor names of both sides before "
                   "matching them, e.g. module. of a DataParallel state dict (repeatable)")
        ->type_name("PREFIX");
    sub.add_flag("--config", config_,
                 "Compare the config.yaml renderings archives carry, not their modules");
    add_load_with_libtorch(sub, with_libtorch_);
    output_.add(sub, /*markdown=*/true);
  }

  int run() override {
    const vd::DiffGate gate(ignore_, only_, tolerances_, strip_prefixes_);
    vd::OutputPlan plan = plan_outputs(output_, {{"OLD", old_path_}, {"NEW", new_path_}});
    const vd::LibTorchInspector fallback = libtorch_fallback(with_libtorch_);
    const vd::SideKind kind = config_ ? vd::SideKind::configuration : vd::SideKind::by_content;
    const auto [old_set, new_set] = vd::load_record_sets(old_path_, new_path_, fallback, kind);
    const vd::RecordDiff diff = vd::diff_records(old_set, new_set, gate);
    write_records(plan, new_path_, [&](std::ostream& out) {
      vd::write_diff(out, old_set, new_set, diff.changes, diff.compared, output_.parsed_format());
    });
    plan.commit();
    // a change within its tolerance is reported, and lets the gate pass
    return std::any_of(diff.changes.begin(), diff.changes.end(),
                       [](const vd::Change& c) { return c.counts(); })
               ? 1
               : 0;
  }

 private:
  std::string old_path_, new_path_;
  std::vector<std::string> ignore_, only_, tolerances_, strip_prefixes_;
  bool config_ = false;
  bool with_libtorch_ = false;
  OutputOptions output_;
};

}  // namespace

std::unique_ptr<Command> diff_command() { return std::make_unique<Diff>(); }

}  // namespace vin::cli
