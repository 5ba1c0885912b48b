#include "vin/diagnostics/export/export_archive.h"

#include "vin/diagnostics/export/aoti_package.h"
#include "vin/diagnostics/export/export_reader.h"
#include <algorithm>
#include <map>
#include <memory>

#include "vin/diagnostics/container/crc32.h"
#include "vin/diagnostics/export/export_module_stack.h"
#include "vin/diagnostics/json/bounded_json.h"
#include "vin/diagnostics/pickle/pickle_reader.h"
#include "vin/diagnostics/pickle/saved_tensor.h"
#include "vin/diagnostics/records/error.h"
#include "vin/diagnostics/records/module_counts.h"
#include "vin/diagnostics/text/printable.h"
#include "vin/diagnostics/text/type_names.h"
#include "vin/diagnostics/torch_save/torch_save_file.h"

namespace vin::diagnostics {
namespace export_detail {

ExportReader::OpenedProgram ExportReader::open_program(const std::string& model) {
  OpenedProgram out;
  out.model = model;
  out.entry = program_entry(model);
  const std::string& entry = out.entry;
  const auto index = zip_.find(entry);
  if (!index) throw Malformed{entry + " is missing"};
  out.json = parse_json_entry(zip_.read(*index, kMaxProgramBytes, entry), entry);
  out.schema_version = schema_version(out.json, entry);
  if (const Json* v = optional_field(out.json, "torch_version"); v && v->is_string())
    out.torch_version = v->get<std::string>();
  const Json& graph_module = out.graph_module();
  const Json& graph = out.graph();
  // the modules the program names first (a tied parameter's name is recovered among them),
  // then in named_modules() order: module_call_graph's (that order in torch 2.6 on), the
  // tensors' (the state dict's order), the nodes'
  std::tie(out.called, out.stacked) = module_paths(graph_module, graph, entry);
  for (const auto& paths : {out.called, out.stacked})
    for (const std::string& p : paths) known_modules_.insert(p);
  read_tensors(graph_module, graph, model, entry);
  for (const std::string& p : out.called) add_path(p);
  // the state dict's order first (registration order: an unused module's parameters, which
  // the signature leaves out, among the others), then the tensors only the signature names
  for (const std::string& name : state_dict_order_) add_path(parent_path(name));
  for (const NamedTensor& t : tensors_) add_path(parent_path(t.name));
  add_executed_paths(out.stacked);
  return out;
}

ModelMetadata ExportReader::read(const std::string& wanted) {
  ExportArchive archive;
  archive.file = zip_.path();
  archive.layout = layout_ == ExportLayout::export_zip ? "export_zip" : "pt2_archive";
  archive.models = model_names();
  archive.extra_files = extra_files();
  const OpenedProgram opened = open_program(chosen_model(archive.models, wanted));
  const std::string& entry = opened.entry;
  const Json& program = opened.json;
  const Json& graph_module = opened.graph_module();
  const Json& graph = opened.graph();
  archive.schema_version = opened.schema_version;
  if (opened.torch_version) archive.torch_version = *opened.torch_version;
  ModelMetadata out = describe();
  ModelDetails details = out.details();
  details.export_archive = std::move(archive);
  if (details_.operators) details.operators = operator_counts(graph, entry);
  if (details_.signature) {
    details.graph_signature = graph_signature(graph_module, entry);
    details.methods =
        std::vector<MethodSignature>{forward_signature(program, graph_module, graph, entry)};
  }
  return ModelMetadata(out.model_type(), out.total_parameters(), out.trainable_parameters(),
                       out.modules(), std::move(details));
}

std::vector<std::string> ExportReader::model_names() const {
  if (layout_ == ExportLayout::export_zip) return {"model"};
  std::vector<std::string> names;
  const std::string folder = root_ + "models/";
  for (const auto& e : zip_.entries()) {
    if (e.name.rfind(folder, 0) != 0) continue;
    const std::string rest = e.name.substr(folder.size());
    if (rest.size() > 5 && rest.find('/') == std::string::npos &&
        rest.compare(rest.size() - 5, 5, ".json") == 0)
      names.push_back(rest.substr(0, rest.size() - 5));
  }
  return names;
}

std::vector<std::string> ExportReader::extra_files() const {
  const std::string folder =
      layout_ == ExportLayout::export_zip ? "extra_files/" : root_ + "extra/";
  std::vector<std::string> names;
  for (const auto& e : zip_.entries())
    if (e.name.rfind(folder, 0) == 0 && e.name.size() > folder.size() && e.name.back() != '/')
      names.push_back(e.name.substr(folder.size()));
  std::sort(names.begin(), names.end());
  return names;
}

std::string ExportReader::chosen_model(const std::vector<std::string>& names, const std::string& wanted) const {
  const auto listed = [&] {
    std::string all;
    for (const auto& n : names) all += (all.empty() ? "" : ", ") + n;
    return all;
  };
  if (names.empty()) throw Malformed{root_ + "models/ holds no program"};
  if (!wanted.empty()) {
    if (std::find(names.begin(), names.end(), wanted) == names.end())
      throw UsageError("--model " + wanted + ": " + zip_.path() + " holds no such model (it " +
                       "holds " + listed() + ")");
    return wanted;
  }
  if (names.size() == 1) return names.front();
  if (std::find(names.begin(), names.end(), "model") != names.end()) return "model";
  throw UsageError(zip_.path() + " holds several models (" + listed() +
                   "): --model NAME says which");
}

std::string ExportReader::program_entry(const std::string& model) const {
  return layout_ == ExportLayout::export_zip ? "serialized_exported_program.json"
                                             : root_ + "models/" + model + ".json";
}

std::string ExportReader::schema_version(const Json& program, const std::string& entry) {
  const Json* v = optional_field(program, "schema_version");
  if (!v) throw Malformed{entry + " has no schema_version"};
  std::int64_t major = 0;
  std::string text;
  if (v->is_number_integer()) {  // torch 2.1 and 2.2: 1 and 2
    major = v->get<std::int64_t>();
    text = std::to_string(major);
  } else {
    const Json& m = *field(*v, "major", entry + ": schema_version");
    const Json& n = *field(*v, "minor", entry + ": schema_version");
    if (!m.is_number_integer() || !n.is_number_integer())
      throw Malformed{entry + "'s schema_version is not two integers"};
    major = m.get<std::int64_t>();
    text = std::to_string(major) + "." + std::to_string(n.get<std::int64_t>());
  }
  if (major > kNewestSchemaMajor || major < 0)
    throw Malformed{entry + " has schema version " + text + "; the newest this reader " +
                    "understands is " + std::to_string(kNewestSchemaMajor) + ".x"};
  return text;
}

void ExportReader::add_path(const std::string& path) {
  if (!paths_.insert(path).second) return;
  // its ancestors first, each under its parent in the order first met
  if (!path.empty()) {
    const std::string parent = parent_path(path);
    add_path(parent);
    children_[parent].push_back(path);
  }
}

// The modules only the nodes name (no tensor of theirs, and a call graph of the root alone,
// as torch 2.1-2.5 wrote it): each placed among its siblings after the sibling that ran
// before it (first among them if none did), so a ReLU between two Linears of a Sequential,
// or a pooling layer between a body and a head, stays where the model registered it.
void ExportReader::add_executed_paths(const std::vector<std::string>& executed) {
  std::unordered_map<std::string, std::string> last_run;  // parent -> the child that ran last
  for (const std::string& path : executed) {
    if (path.empty()) continue;
    const std::string parent = parent_path(path);
    if (paths_.insert(path).second) {
      add_path(parent);
      std::vector<std::string>& siblings = children_[parent];
      auto at = siblings.begin();  // first, where no sibling ran before it
      if (const auto before = last_run.find(parent); before != last_run.end()) {
        at = std::find(siblings.begin(), siblings.end(), before->second);
        if (at != siblings.end()) ++at;
      }
      siblings.insert(at, path);
    }
    last_run[parent] = path;
  }
}

ModelMetadata ExportReader::describe() const {
  // tensors by the module that registers them
  std::map<std::string, std::vector<const NamedTensor*>> by_module;
  for (const NamedTensor& t : tensors_) by_module[parent_path(t.name)].push_back(&t);
  ModelCounts<std::string> counts;
  std::vector<ModuleMetadata> modules;
  const std::function<void(const std::string&)> visit = [&](const std::string& path) {
    DirectCounts direct;
    std::vector<TensorMetadata> listed;
    const auto own = by_module.find(path);
    for (const char* kind : {"parameter", "buffer", "constant"}) {
      if (own == by_module.end()) break;
      for (const NamedTensor* t : own->second) {
        if (t->kind != kind) continue;
        const std::int64_t nbytes = t->numel * t->dtype->element_size;
        if (t->kind == std::string("parameter"))
          counts.parameter(direct, t->identity(), t->numel, t->requires_grad, nbytes);
        else if (t->kind == std::string("buffer"))
          counts.buffer(direct, t->identity(), t->numel, nbytes);
        if (details_.tensors) {
          TensorMetadata m;
          m.name = leaf_name(t->name);
          m.kind = t->kind;
          m.shape = t->shape;
          m.dtype = t->dtype->python_name();
          m.device = t->device;
          m.requires_grad = t->requires_grad;
          m.numel = t->numel;
          m.nbytes = nbytes;
          if (t->crc) m.storage_crc32 = crc32_text(*t->crc);
          if (t->data_crc) m.data_crc32 = crc32_text(*t->data_crc);
          listed.push_back(std::move(m));
        }
      }
    }
    const auto type = types_.find(path);
    ModuleDetails module_details;
    if (details_.tensors) module_details.tensors = std::move(listed);
    if (details_.attributes) module_details.attributes = Json::object();  // export has none
    modules.emplace_back(
        path.empty() ? kRootPath : path,
        type == types_.end() ? std::nullopt : std::optional<std::string>(type->second),
        direct.parameters, direct.trainable, direct.buffers, std::nullopt,
        std::move(module_details));
    if (const auto kids = children_.find(path); kids != children_.end())
      for (const std::string& child : kids->second) visit(child);
  };
  visit("");
  ModelDetails details;
  if (details_.tensors) counts.put_bytes(details);
  const auto root_type = types_.find("");
  return ModelMetadata(
      root_type == types_.end() ? std::nullopt : std::optional<std::string>(root_type->second),
      counts.total(), counts.trainable(), std::move(modules), std::move(details));
}

}  // namespace export_detail

using export_detail::ExportReader;
using export_detail::Malformed;

std::optional<ExportLayout> export_layout(const ZipArchive& zip) {
  const std::string top = zip.first_folder();
  if (!top.empty() && zip.find(top + "archive_format")) {
    // compiled models and no program: a package; else a PT2 Archive, whatever it lacks
    if (!zip.has_entry_under(top + "models/") && zip.has_entry_under(top + "data/aotinductor/"))
      return ExportLayout::aoti_package;
    return ExportLayout::pt2_archive;
  }
  if (zip.find("serialized_exported_program.json")) return ExportLayout::export_zip;
  if (zip.find("archive_format") && zip.has_entry_under("data/aotinductor/"))
    return ExportLayout::aoti_package;
  return std::nullopt;
}

ModelMetadata read_export_archive(const ZipArchive& zip, const InspectDetails& details,
                                  const std::string& model) {
  const auto layout = export_layout(zip);
  if (!layout) throw Error(zip.path() + ": not a torch.export archive");
  if (*layout == ExportLayout::aoti_package) {
    ExportArchive archive = aoti_package(zip);
    std::string listed;
    for (const AotiModel& m : *archive.aoti) {
      std::string where = m.device.value_or("");
      if (m.platform) where += (where.empty() ? "" : ", ") + *m.platform;
      listed += (listed.empty() ? "" : "; ") + m.model + (where.empty() ? "" : " (" + where + ")");
    }
    const std::string why =
        zip.path() + ": an AOTInductor package (compiled code, no exported program) " +
        (listed.empty() ? std::string("holding no model") : "holding " + listed) +
        "; it has no modules to describe: torch.export.save of the ExportedProgram "
        "(before torch._inductor.aoti_compile_and_package) makes a .pt2 this tool reads";
    throw UndescribedArchive(std::move(archive), why);
  }
  try {
    return ExportReader(zip, *layout, details).read(model);
  } catch (const Malformed& m) {
    throw Error(zip.path() + ": a torch.export archive that cannot be read: " + m.why);
  }
}

}  // namespace vin::diagnostics
