// report: one HTML file that shows where a model's cost is, and what changed (docs/report.md).
#include <sstream>

#include "../command.h"
#include "../outputs.h"
#include "../profile_run.h"
#include "../torch_access.h"
#include "vin/diagnostics/diff/record_sources.h"
#include "vin/diagnostics/diff/saved_records.h"
#include "vin/diagnostics/formats/file_format.h"
#include "vin/diagnostics/formats/model_file.h"
#include "vin/diagnostics/report/report_html.h"
#include "vin/diagnostics/report/report_page.h"
#include "vin/diagnostics/text/printable.h"

namespace vd = vin::diagnostics;

namespace vin::cli {
namespace {

constexpr std::int64_t kDefaultMaxBytes = std::int64_t{32} << 20;

class Report : public Command {
 public:
  Report()
      : Command({"report", nullptr,
                 "Write one self-contained HTML page of a profile's or a model's module tree "
                 "(icicle, treemap, tables), or of what changed between two",
                 "vin-inspect report before.jsonl after.jsonl -o change.html --metric time"}) {}

  void define(CLI::App& sub) override {
    sub.add_option("SIDES", paths_,
                   "[OLD] NEW: profile records (jsonl or json), inspect-model records (the "
                   "parameters view), a weights file, or a model file profile runs first: " +
                       vd::formats_serving(vd::kRun | vd::kRunProgram))
        ->required()
        ->expected(1, 2);
    sub.add_option("-o,--output", output_.output,
                   "The HTML file to write (required; - for standard output)")
        ->type_name("FILE.html")
        ->required();
    std::vector<std::string> metrics;
    for (const vd::ReportMetric& m : vd::report_metrics()) metrics.push_back(m.name);
    sub.add_option("--metric", metric_,
                   "The view opened first: flops, time, parameters or memory (default flops; "
                   "parameters for model records)")
        ->type_name("METRIC")
        ->check(CLI::IsMember(metrics));
    sub.add_option("--title", title_, "The page's title (shown as text; default the NEW file's name)")
        ->type_name("TEXT");
    add_integer(sub, "--max-bytes", max_bytes_, 1, kNoUpperBound,
                "Refuse (exit 1) rather than write a page larger than N bytes");
    sub.add_option("--tolerance", tolerances_,
                   "FIELD=LIMIT, as diff reads it: a change of a metric's field (flops, time_ms, "
                   "parameters, allocated_bytes) within LIMIT is coloured as unchanged "
                   "(repeatable)")
        ->type_name("FIELD=LIMIT");
    profile_.add_inputs(sub);
    profile_.add_timing(sub);
    add_load_with_libtorch(sub, with_libtorch_);
  }

  int run() override {
    const vd::DiffGate gate({}, {}, tolerances_);
    std::vector<vd::NamedPath> inputs;
    for (std::size_t i = 0; i < paths_.size(); ++i)
      inputs.push_back({paths_.size() == 2 && i == 0 ? "OLD" : "NEW", paths_[i]});
    std::vector<vd::ClassifiedFile> files;
    bool runs = false;
    for (const std::string& path : paths_) {
      files.push_back(vd::open_model_file(path, kSide, "records or a model file"));
      runs = runs || runnable(files.back());
    }
    if (runs) profile_.prepare();
    vd::OutputPlan plan = plan_outputs(output_, profile_.run.named_inputs(inputs));
    std::vector<vd::RecordSet> sides;
    for (const vd::ClassifiedFile& file : files) sides.push_back(side(file, plan));
    std::vector<const vd::RecordSet*> pointers;
    for (const vd::RecordSet& side : sides) pointers.push_back(&side);
    const vd::Json data = vd::report_data(pointers, {metric_, title_, gate});
    const std::string page = vd::report_html(data);
    if (static_cast<std::int64_t>(page.size()) > max_bytes_)
      throw vd::Error(vd::printable(paths_.back()) + ": the page would be " +
                      std::to_string(page.size()) + " bytes, more than --max-bytes " +
                      std::to_string(max_bytes_) + " (browsers choke on such pages; raise it "
                      "to write it anyway)");
    vd::write_output(plan.destination(kRecordsOutput), page);
    plan.commit();
    return 0;
  }

 private:
  // what a side may be: saved records, a model file to run, a model or weights file described
  static constexpr unsigned kSide = vd::kRecords | vd::kRun | vd::kRunProgram | vd::kDescribe;

  static bool runnable(const vd::ClassifiedFile& file) {
    return !vd::serves(file, vd::kRecords) && vd::serves(file, vd::kRun | vd::kRunProgram);
  }

  vd::RecordSet side(const vd::ClassifiedFile& file, vd::OutputPlan& plan) {
    if (vd::serves(file, vd::kRecords)) return vd::read_record_file(*file.file);
    if (!runnable(file))  // a weights file: its inspect-model records, the parameters view
      return vd::load_record_set(file.path(), libtorch_fallback(with_libtorch_));
    const vd::ProfileResult result = profile_.profile(file.path(), plan);
    std::ostringstream records;
    vd::write_profile(records, result.records, vd::OutputFormat::jsonl);
    return vd::read_record_file(*vd::InputFile::from_bytes(file.path(), records.str()));
  }

  std::vector<std::string> paths_;
  OutputOptions output_;
  std::string metric_;
  std::string title_;
  std::int64_t max_bytes_ = kDefaultMaxBytes;
  std::vector<std::string> tolerances_;
  ProfileRun profile_;
  bool with_libtorch_ = false;
};

}  // namespace

std::unique_ptr<Command> report_command() { return std::make_unique<Report>(); }

}  // namespace vin::cli
