// compare: where two runs diverge, module call by module call (docs/compare.md).
#include <cfloat>
#include <cstdlib>
#include <iostream>

#include "../command.h"
#include "../outputs.h"
#include "../torch_access.h"
#include "vin/diagnostics/formats/file_format.h"
#include "vin/diagnostics/text/printable.h"

namespace vd = vin::diagnostics;

namespace vin::cli {
namespace {

class Compare : public Command {
 public:
  Compare()
      : Command({"compare", nullptr,
                 "Where two runs diverge: two archives (or saved tensors) on the same inputs, "
                 "module call by module call",
                 "vin-inspect compare net.pt net_half.pt --shape x=1x3x224x224 --format table",
                 2}) {}

  void define(CLI::App& sub) override {
    sub.add_option("A", request_.a.path,
                   "The model file (" + vd::formats_serving(vd::kRun | vd::kRunProgram) +
                       "), or tensors saved by capture --save or scripts/eager_capture.py")
        ->required();
    sub.add_option("B", request_.b.path, "The same kinds of file to compare with A")->required();
    run_.add(sub, "Inputs for one forward of each archive side (repeatable)");
    add_device(sub, "--device-a", request_.a.device, "Where A runs (default cpu)");
    add_device(sub, "--device-b", request_.b.device, "Where B runs (default cpu)");
    add_modules(sub, modules_,
                "Registered path or pattern to compare (repeatable; default: every module)");
    sub.add_option("--atol", request_.atol,
                   "Absolute tolerance (default: torch.testing's for the dtype)")
        ->type_name("X")
        ->check(number_within(0, false, DBL_MAX, "a finite number >= 0"));
    sub.add_option("--rtol", request_.rtol,
                   "Relative tolerance (default: torch.testing's for the dtype)")
        ->type_name("X")
        ->check(number_within(0, false, DBL_MAX, "a finite number >= 0"));
    sub.add_flag("--equal-nan", request_.equal_nan, "NaN on both sides counts as equal");
    add_integer(sub, "--max-compare-bytes", request_.max_compare_bytes, 1, kNoUpperBound,
                "A's tensors kept whole; past it, pairs are compared by statistics");
    add_walk_limits(sub, request_.max_traversal_nodes, request_.max_container_depth);
    output_.add(sub);
  }

  int run() override {
    request_.module_paths = selected_modules(modules_);
    // which side is an archive (and so needs --inputs or --shape) compare_sides tells, opening
    // each file once
    run_.apply_to(request_.run, false);
    vd::OutputPlan plan =
        plan_outputs(output_, run_.named_inputs({{"A", request_.a.path}, {"B", request_.b.path}}));
    // a forward past --timeout that cannot be stopped: the message, then compare's status for
    // trouble (from the plugin's watchdog thread)
    request_.on_abandoned = [&plan](const std::string& message) {
      plan.discard();
      std::cerr << "vin-inspect: error: " << vd::printable(message, 2000) << "\n";
      std::_Exit(2);
    };
    name_unrunnable_files({request_.a.path, request_.b.path}, /*saved_tensors=*/true,
                          /*programs=*/true);
    const vd::CompareResult result = torch_plugin().compare_sides(request_);
    write_records(plan, request_.b.path, [&](std::ostream& out) {
      vd::write_comparison(out, result, output_.parsed_format());
    });
    if (result.error) throw vd::Error(*result.error);
    plan.commit();
    const vd::ComparisonSummary& s = result.summary;
    return s.beyond == 0 && s.only_in_a == 0 && s.only_in_b == 0 ? 0 : 1;
  }

 private:
  vd::CompareRequest request_;
  RunOptions run_;
  std::vector<std::string> modules_;
  OutputOptions output_;
};

}  // namespace

std::unique_ptr<Command> compare_command() { return std::make_unique<Compare>(); }

}  // namespace vin::cli
