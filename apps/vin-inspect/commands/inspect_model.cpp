// inspect-model (model): an archive's modules, parameters and buffers, read as data
// (docs/records.md).
#include <spdlog/spdlog.h>

#include "../command.h"
#include "../outputs.h"
#include "../torch_access.h"
#include "vin/diagnostics/export/export_archive.h"
#include "vin/diagnostics/formats/file_format.h"
#include "vin/diagnostics/formats/model_file.h"
#include "vin/diagnostics/text/printable.h"

namespace vd = vin::diagnostics;

namespace vin::cli {
namespace {

class InspectModel : public Command {
 public:
  InspectModel()
      : Command({"inspect-model", "model",
                 "Describe a model file's registered modules, parameters and buffers (no forward "
                 "pass)",
                 "vin-inspect inspect-model net.pt --format table"}) {}

  void define(CLI::App& sub) override {
    // the formats as the format table names them (formats/file_format.cpp)
    sub.add_option("ARCHIVE", archive_,
                   "The model file: " + vd::formats_serving(vd::kDescribe) +
                       "; or a directory holding a weights file or a sharded set's index")
        ->required();
    sub.add_flag("--tensors", details_.tensors,
                 "Each parameter and buffer (shape, dtype, device, bytes, storage CRC-32) and the "
                 "model's size in bytes");
    sub.add_flag("--attributes", details_.attributes,
                 "Each module's settings: attributes and constants such as kernel_size");
    sub.add_flag("--signature", details_.signature,
                 "The root's forward and public methods: arguments, defaults, return type");
    sub.add_flag("--all", all_, "--tensors --attributes --signature");
    sub.add_flag("--operators", details_.operators,
                 "A .pt2's operator calls per module (OperatorCount: module, operator, calls)");
    sub.add_option("--model", details_.model,
                   "Which program of a .pt2 holding several (default: model, or the only one)")
        ->type_name("NAME");
    add_load_with_libtorch(sub, with_libtorch_);
    output_.add(sub);
  }

  int run() override {
    vd::OutputPlan plan = plan_outputs(output_, {{"ARCHIVE", archive_}});
    spdlog::debug("inspecting {}", archive_);
    if (all_) details_.tensors = details_.attributes = details_.signature = true;
    const vd::ModelMetadata model = [&] {
      try {
        return vd::describe_model_file(archive_, details_, libtorch_fallback(with_libtorch_));
      } catch (const vd::UndescribedArchive& refused) {
        // what it is (an AOTInductor package's models, devices, platforms), then the refusal
        write_records(plan, archive_, [&](std::ostream& out) {
          vd::write_export_archive(out, refused.archive(), output_.parsed_format());
        });
        plan.commit();
        throw;
      }
    }();
    spdlog::debug("{} modules, {} parameters", model.modules().size(), model.total_parameters());
    if (model.details().stopped_by)  // the records say it too (ModelMetadata's stopped_by)
      spdlog::warn("{}: the details reached the output budget, which what the file holds "
                   "bounds (docs/safety.md): the attribute values past it are given by their "
                   "type and the tensors past it are not listed (stopped_by: {})",
                   vd::printable(archive_, 400), *model.details().stopped_by);
    write_records(plan, archive_, [&](std::ostream& out) {
      vd::write_model_metadata(out, model, output_.parsed_format());
    });
    plan.commit();
    return 0;
  }

 private:
  std::string archive_;
  vd::InspectDetails details_;
  bool all_ = false;
  bool with_libtorch_ = false;
  OutputOptions output_;
};

}  // namespace

std::unique_ptr<Command> inspect_model_command() { return std::make_unique<InspectModel>(); }

}  // namespace vin::cli
