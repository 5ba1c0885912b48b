// inspect-config (config): the configuration tree from its YAML rendering
// (docs/config-rendering.md).
#include <spdlog/spdlog.h>

#include "../command.h"
#include "../outputs.h"
#include "vin/diagnostics/config/inspect_config.h"

namespace vd = vin::diagnostics;

namespace vin::cli {
namespace {

class InspectConfig : public Command {
 public:
  InspectConfig()
      : Command({"inspect-config", "config",
                 "Describe a configuration tree from its YAML rendering (a .yaml file, or an "
                 "archive's config.yaml)",
                 "vin-inspect inspect-config net.pt --format table"}) {}

  void define(CLI::App& sub) override {
    sub.add_option("CONFIG", config_,
                   "YAML rendering (.yaml/.yml) or a TorchScript archive carrying one as its "
                   "config.yaml extra file")
        ->required();
    output_.add(sub);
  }

  int run() override {
    vd::OutputPlan plan = plan_outputs(output_, {{"CONFIG", config_}});
    spdlog::debug("inspecting configuration {}", config_);
    const vd::ModelStructureSpec spec = vd::inspect_config_file(config_);
    write_records(plan, config_, [&](std::ostream& out) {
      vd::write_structure_spec(out, spec, output_.parsed_format());
    });
    plan.commit();
    return 0;
  }

 private:
  std::string config_;
  OutputOptions output_;
};

}  // namespace

std::unique_ptr<Command> inspect_config_command() { return std::make_unique<InspectConfig>(); }

}  // namespace vin::cli
