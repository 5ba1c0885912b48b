#include "vin/diagnostics/diff/record_sources.h"

#include <exception>
#include <future>
#include <optional>

#include "vin/diagnostics/config/inspect_config.h"
#include "vin/diagnostics/formats/file_format.h"
#include "vin/diagnostics/records/error.h"

namespace vin::diagnostics {
namespace {

RecordSet configuration_side(const ClassifiedFile& file) {
  UnwalkedValues unwalked;
  const ModelStructureSpec spec = inspect_config_file(file, &unwalked);
  return record_set(spec, file.path(), std::move(unwalked));
}

// What a side may be: a model file, a configuration rendering, saved records
constexpr unsigned kSide = kDescribe | kConfig | kRecords;

ClassifiedFile classify_side(const std::string& path) {
  // opened once, told apart once: an archive, saved records, else a YAML rendering; a directory
  // stands for the sharded set or the weights file it holds
  return naming_out_of_memory(path, "reading the file", [&] {
    return open_model_file(path, kSide, "an archive, a record file or a configuration");
  });
}

bool saved_records(const ClassifiedFile& file) { return serves(file, kRecords); }

// A side read as data alone, never loading LibTorch, which may be read on a thread of its own:
// saved records, and weights files (whose checksums are most of a diff's time, issue 68)
bool read_as_data(const ClassifiedFile& file) {
  return saved_records(file) || is_weights_kind(file.kind);
}

RecordSet load_classified(const ClassifiedFile& file, const LibTorchInspector& fallback,
                          SideKind kind) {
  const std::string& path = file.path();
  if (saved_records(file))
    return naming_out_of_memory(path, "reading the records",
                                [&] { return read_record_file(*file.file); });
  const bool rendering = kind == SideKind::configuration ? serves(file, kConfig)
                                                         : !serves(file, kDescribe);
  if (rendering) return configuration_side(file);
  InspectDetails details = InspectDetails::everything();
  details.operators = true;  // a .pt2's OperatorCount records (a .pt has none)
  return record_set(describe_model_file(file, details, fallback), path);
}

}  // namespace

RecordSet load_record_set(const std::string& path, const LibTorchInspector& fallback,
                          SideKind kind) {
  return load_classified(classify_side(path), fallback, kind);
}

std::pair<RecordSet, RecordSet> load_record_sets(const std::string& old_path,
                                                 const std::string& new_path,
                                                 const LibTorchInspector& fallback,
                                                 SideKind kind) {
  // the old side's trouble is the one reported, as when the two are read one after the other
  const ClassifiedFile old_file = classify_side(old_path);
  std::optional<ClassifiedFile> new_file;
  if (read_as_data(old_file)) {
    try {
      new_file = classify_side(new_path);
    } catch (const Error&) {
      load_classified(old_file, fallback, kind);
      throw;
    }
  }
  // only the readers of data run on a thread of their own: an archive's side may load LibTorch
  if (!new_file || !read_as_data(*new_file)) {
    RecordSet old_set = load_classified(old_file, fallback, kind);
    if (!new_file) new_file = classify_side(new_path);
    return {std::move(old_set), load_classified(*new_file, fallback, kind)};
  }
  auto old_side = std::async(std::launch::async,
                             [&] { return load_classified(old_file, fallback, kind); });
  std::optional<RecordSet> new_set;
  std::exception_ptr new_error;
  try {
    new_set = load_classified(*new_file, fallback, kind);
  } catch (...) {
    new_error = std::current_exception();
  }
  RecordSet old_set = old_side.get();  // its error first
  if (new_error) std::rethrow_exception(new_error);
  return {std::move(old_set), std::move(*new_set)};
}

}  // namespace vin::diagnostics
