#include "vin/diagnostics/diff/record_diff.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <unordered_map>
#include <unordered_set>

#include "vin/diagnostics/diff/diff_gate.h"
#include "vin/diagnostics/records/bounded_json.h"
#include "vin/diagnostics/records/error.h"
#include "vin/diagnostics/records/record_fields.h"
#include "vin/diagnostics/text/printable.h"
#include "vin/diagnostics/text/suggest.h"

namespace vin::diagnostics {
namespace {

constexpr int kMaxJsonDepth = 64;
constexpr std::uint64_t kMaxRecordFileBytes = std::uint64_t{1} << 30;

// the fields each record read back must have; a profile's are also the ones diff compares
// (what does not depend on the machine: record_fields.cpp)
const std::vector<const char*> kModelKeys = required_fields("ModelMetadata");
const std::vector<const char*> kModuleKeys = required_fields("ModuleMetadata");
const std::vector<const char*> kTensorKeys = required_fields("TensorMetadata");
const std::vector<const char*> kMethodKeys = required_fields("MethodSignature");
const std::vector<const char*> kGraphSignatureKeys = required_fields("GraphSignature");
const std::vector<const char*> kOperatorCountKeys = required_fields("OperatorCount");
const std::vector<const char*> kSpecKeys = required_fields("ModelStructureSpec");
const std::vector<const char*> kFieldKeys = required_fields("ConfigFieldSpec");
const std::vector<const char*> kModuleProfileKeys = compared_fields("ModuleProfile");
const std::vector<const char*> kOperatorProfileKeys = compared_fields("OperatorProfile");
const std::vector<const char*> kProfileSummaryKeys = compared_fields("ProfileSummary");

// The fields of `record` (a name of the field tables) diff compares when no option names them:
// the tables' `compared` (not times, memory, latency, the container of a .pt2); a field the
// tables do not list (a saved record's extra key) is not compared.
const std::unordered_set<std::string>& compared_by_default(const char* record) {
  static const auto by_record = [] {
    std::unordered_map<std::string, std::unordered_set<std::string>> out;
    for (const RecordInfo& info : record_infos())
      for (const FieldInfo& f : info.fields)
        if (f.compared) out[info.record].insert(f.name);
    return out;
  }();
  static const std::unordered_set<std::string> none;
  const auto it = by_record.find(record);
  return it == by_record.end() ? none : it->second;
}

// A record's key as map text: a string as itself (the common case, without printing), anything
// else as its JSON (a leading quote mark keeps the two apart).
std::string key_text(const Json& key) {
  return key.is_string() ? "s" + key.get_ref<const std::string&>() : "j" + dump_line(key);
}

// Whether `name` is one of `names`.
bool one_of(const std::string& name, std::initializer_list<const char*> names) {
  return std::any_of(names.begin(), names.end(), [&](const char* n) { return name == n; });
}

Json without(const Json& j, std::initializer_list<const char*> keys) {
  Json out = Json::object();
  for (const auto& [key, value] : j.items())
    if (!one_of(key, keys)) out[key] = value;
  return out;
}

void require_keys(const Json& j, const std::vector<const char*>& keys, const char* record,
                  const std::string& where) {
  if (!j.is_object()) throw Error(where + ": a " + record + " that is not a JSON object");
  for (const char* key : keys)
    if (!j.contains(key)) throw Error(where + ": a " + record + " without '" + key + "'");
}

Json parse_bounded(const std::string& text) { return parse_bounded_json(text, kMaxJsonDepth); }

// A field one side cannot know is not a change (contract 10.3): a torch.export archive records no
// training mode, and no type for a module no node of which ran (null there, known in a .pt).
// Nor is a class of the script that made the model: TorchScript keeps no `__main__.` in its
// name (`Net` in a .pt, `__main__.Net` in a .pt2).
bool not_a_change(const std::string& field, const Json& a, const Json& b) {
  if (field != "training" && field != "module_type" && field != "model_type") return false;
  if (a.is_null() != b.is_null()) return true;
  if (!a.is_string() || !b.is_string()) return false;
  const std::string x = a.get<std::string>(), y = b.get<std::string>();
  const std::string main = "__main__.";
  return x == main + y || y == main + x;
}

// document[key], or an empty list where the document has none
const Json& list_at(const Json& document, const char* key) {
  static const Json empty = Json::array();
  return document.contains(key) ? document.at(key) : empty;
}

// A tensor's name as named_parameters() / named_buffers() spell it: `layer1.0.conv1.weight`.
std::string tensor_key(const Json& tensor) {
  const std::string module = tensor.at("module_path").get<std::string>();
  const std::string name = tensor.at("name").get<std::string>();
  return module == kRootPath ? name : module + "." + name;
}

// The model side from its `--format json` document shape (to_json(ModelMetadata)).
// `document` by value: its modules are moved into the set, not copied (a million of them).
RecordSet model_set(Json document, const std::string& source, const std::string& where) {
  RecordSet set;
  set.kind = RecordSet::Kind::model;
  set.source = source;
  require_keys(document, kModelKeys, "ModelMetadata", where);
  // a .pt2's container (ExportArchive: file, layout, versions) is not the model: not compared
  set.header = without(
      document, {"methods", "modules", "record", "export_archive", "operators", "graph_signature"});
  if (document.contains("methods")) {
    set.methods.emplace();
    for (const Json& method : document.at("methods")) {
      require_keys(method, kMethodKeys, "MethodSignature", where);
      set.methods->push_back(without(method, {"record"}));
    }
  }
  set.torch_export = document.contains("export_archive");
  if (document.contains("graph_signature")) {
    const Json& signature = document.at("graph_signature");
    require_keys(signature, kGraphSignatureKeys, "GraphSignature", where);
    set.graph_signature = without(signature, {"record"});
  }
  if (document.contains("operators")) {
    const Json& counts = document.at("operators");
    if (!counts.is_array()) throw Error(where + ": \"operators\" is not a list");
    set.operator_counts.emplace();
    for (const Json& count : counts) {
      require_keys(count, kOperatorCountKeys, "OperatorCount", where);
      set.operator_counts->push_back(without(count, {"record"}));
    }
  }
  if (set.header.contains("parameter_bytes")) set.tensors.emplace();
  if (!document.contains("modules")) document["modules"] = Json::array();
  Json& modules = document["modules"];
  if (!modules.is_array()) throw Error(where + ": \"modules\" is not a list");
  set.has_attributes = !modules.empty() && !set.torch_export;
  set.items.reserve(modules.size());
  for (Json& module : modules) {
    require_keys(module, kModuleKeys, "ModuleMetadata", where);
    set.has_attributes = set.has_attributes && module.contains("attributes");
    if (module.contains("tensors")) {
      if (!set.tensors) set.tensors.emplace();
      for (const Json& tensor : module.at("tensors")) {
        require_keys(tensor, kTensorKeys, "TensorMetadata", where);
        Json item = Json::object({{"module_path", module.at("path")}});
        const Json fields = without(tensor, {"record", "module_path"});
        for (const auto& [key, value] : fields.items()) item[key] = value;
        set.tensors->push_back(std::move(item));
      }
    }
    module.erase("tensors");
    module.erase("record");
    set.items.push_back(std::move(module));
  }
  return set;
}

RecordSet config_set(const Json& document, const std::string& source, const std::string& where) {
  RecordSet set;
  set.kind = RecordSet::Kind::config;
  set.source = source;
  require_keys(document, kSpecKeys, "ModelStructureSpec", where);
  set.header = without(document, {"fields", "record"});
  const Json& fields = list_at(document, "fields");
  if (!fields.is_array()) throw Error(where + ": \"fields\" is not a list");
  for (const Json& field : fields) {
    require_keys(field, kFieldKeys, "ConfigFieldSpec", where);
    set.items.push_back(without(field, {"record"}));
  }
  return set;
}

// `keys` of `j` (which has them all), in that order.
Json only(const Json& j, const std::vector<const char*>& keys) {
  Json out = Json::object();
  for (const char* key : keys) out[key] = j.at(key);
  return out;
}

// The profile side from its `--format json` document shape (write_profile): the fields that do
// not depend on the machine.
// `document` by value: its records are moved into the set, not copied.
RecordSet profile_set(Json document, const std::string& source, const std::string& where) {
  RecordSet set;
  set.kind = RecordSet::Kind::profile;
  set.source = source;
  require_keys(document, kProfileSummaryKeys, "ProfileSummary", where);
  // every field: those not compared by default (times, memory) are when --only or --tolerance
  // names them
  set.header = without(document, {"modules", "operators", "record"});
  for (const char* list : {"modules", "operators"})
    if (!document.contains(list)) document[list] = Json::array();
  Json& modules = document["modules"];
  Json& operators = document["operators"];
  if (!modules.is_array() || !operators.is_array())
    throw Error(where + ": \"modules\" or \"operators\" is not a list");
  set.items.reserve(modules.size());
  for (Json& module : modules) {
    require_keys(module, kModuleProfileKeys, "ModuleProfile", where);
    if (!module.at("module_path").is_string())
      throw Error(where + ": a ModuleProfile whose module_path is not a string");
    module.erase("record");
    set.items.push_back(std::move(module));
  }
  for (Json& op : operators) {
    require_keys(op, kOperatorProfileKeys, "OperatorProfile", where);
    if (!op.at("operator").is_string())
      throw Error(where + ": an OperatorProfile whose operator is not a string");
    op.erase("record");
    set.operators.push_back(std::move(op));
  }
  return set;
}

// One line of a jsonl record file: a JSON object with a string "record" (`where`: FILE:LINE).
Json parse_record_line(const std::string& line, const std::string& where) {
  Json j;
  try {
    j = parse_bounded(line);
  } catch (const JsonTooDeep&) {
    throw Error(where + ": a JSON value nested more than " + std::to_string(kMaxJsonDepth) +
                " levels deep, which no record has");
  } catch (const std::exception&) {
    throw Error(where +
                ": not a JSON line (diff reads the jsonl or json that inspect-model, "
                "inspect-config or profile writes)");
  }
  if (!j.is_object() || !j.contains("record") || !j["record"].is_string())
    throw Error(where + ": a line without a \"record\" key");
  return j;
}

// A jsonl file's records in order, each with its FILE:LINE; blank lines are skipped.
class RecordLines {
 public:
  struct Line {
    Json record;
    std::string where;
  };
  RecordLines(std::istream& in, const std::string& path) : in_(in), path_(path) {}
  /// The next record, or nothing at the end; throws Error naming a line that is not one.
  std::optional<Line> next() {
    std::string text;
    while (std::getline(in_, text)) {
      ++number_;
      if (text.find_first_not_of(" \t\r") == std::string::npos) continue;
      std::string where = path_ + ":" + std::to_string(number_);
      Json record = parse_record_line(text, where);
      return Line{std::move(record), std::move(where)};
    }
    return std::nullopt;
  }

 private:
  std::istream& in_;
  const std::string& path_;
  std::size_t number_ = 0;
};

// profile's jsonl from its first record `line` on: ModuleProfile lines, OperatorProfile lines,
// then one ProfileSummary line.
RecordSet read_profile_jsonl(RecordLines& lines, std::optional<RecordLines::Line> line,
                             const std::string& path) {
  Json document;
  document["modules"] = Json::array();
  document["operators"] = Json::array();
  bool summary = false;
  Json summary_counts;
  for (; line; line = lines.next()) {
    Json& j = line->record;
    const std::string& where = line->where;
    const std::string record = j["record"];
    if (summary)
      throw Error(where + ": a " + printable(record, 80) + " record after the ProfileSummary");
    if (record == "ModuleProfile") {
      require_keys(j, kModuleProfileKeys, "ModuleProfile", where);
      document["modules"].push_back(std::move(j));
    } else if (record == "OperatorProfile") {
      require_keys(j, kOperatorProfileKeys, "OperatorProfile", where);
      document["operators"].push_back(std::move(j));
    } else if (record == "ProfileSummary") {
      require_keys(j, kProfileSummaryKeys, "ProfileSummary", where);
      require_keys(j, {"modules", "operators"}, "ProfileSummary", where);
      for (const auto& [key, value] : j.items())
        if (key != "record" && key != "modules" && key != "operators") document[key] = value;
      summary_counts = only(j, {"modules", "operators"});
      summary = true;
    } else {
      throw Error(where + ": a " + printable(record, 80) + " record among profile records");
    }
  }
  if (!summary) throw Error(path + ": profile records without their ProfileSummary (cut short?)");
  // the summary counts the records profile wrote before it
  const auto held = [&](const char* list) { return Json(document[list].size()); };
  if (!same_json(summary_counts.at("modules"), held("modules")) ||
      !same_json(summary_counts.at("operators"), held("operators")))
    throw Error(path + ": the ProfileSummary counts " + dump_line(summary_counts.at("modules")) +
                " modules and " + dump_line(summary_counts.at("operators")) +
                " operators, the file holds " + dump_line(held("modules")) + " and " +
                dump_line(held("operators")) + " (cut short, or edited?)");
  return profile_set(std::move(document), path, path);
}

bool is_profile_record(const std::string& record) {
  return record == "ModuleProfile" || record == "OperatorProfile" || record == "ProfileSummary";
}

// jsonl: the lines gathered into the `--format json` document shape, then read as one.
RecordSet read_jsonl(std::istream& in, const std::string& path) {
  RecordLines lines(in, path);
  auto line = lines.next();
  if (line && is_profile_record(line->record["record"].get<std::string>()))
    return read_profile_jsonl(lines, std::move(line), path);
  Json document;
  bool model = false;
  std::optional<Json> export_archive;
  for (; line; line = lines.next()) {
    Json& j = line->record;
    const std::string& where = line->where;
    const std::string record = j["record"];
    if (document.is_null() && record == "ExportArchive" && !export_archive) {
      export_archive = without(j, {"record"});  // a .pt2's records: the container first
      continue;
    }
    if (document.is_null()) {
      if (record == "ModelMetadata") {
        require_keys(j, kModelKeys, "ModelMetadata", where);
        model = true;
      } else if (record == "ModelStructureSpec") {
        require_keys(j, kSpecKeys, "ModelStructureSpec", where);
      } else {
        throw Error(where + ": starts with a " + printable(record, 80) +
                    " record; expected ModelMetadata (inspect-model), ModelStructureSpec "
                    "(inspect-config) or profile's records");
      }
      document = without(j, {"record"});
      if (export_archive) document["export_archive"] = *export_archive;
      continue;
    }
    const auto misplaced = [&](const char* expected) {
      return Error(where + ": a " + printable(record, 80) + " record among " + expected +
                   " records");
    };
    if (!model) {
      if (record != "ConfigFieldSpec") throw misplaced("ConfigFieldSpec");
      require_keys(j, kFieldKeys, "ConfigFieldSpec", where);
      j.erase("record");
      document["fields"].push_back(std::move(j));
    } else if (record == "MethodSignature") {
      if (document.contains("modules")) throw misplaced("ModuleMetadata");
      require_keys(j, kMethodKeys, "MethodSignature", where);
      document["methods"].push_back(without(j, {"record"}));
    } else if (record == "GraphSignature") {
      if (document.contains("modules") || document.contains("graph_signature"))
        throw misplaced("ModuleMetadata");
      require_keys(j, kGraphSignatureKeys, "GraphSignature", where);
      document["graph_signature"] = without(j, {"record"});
    } else if (record == "OperatorCount") {
      require_keys(j, kOperatorCountKeys, "OperatorCount", where);
      document["operators"].push_back(without(j, {"record"}));
    } else if (record == "ModuleMetadata") {
      if (document.contains("operators")) throw misplaced("OperatorCount");
      require_keys(j, kModuleKeys, "ModuleMetadata", where);
      j.erase("record");
      document["modules"].push_back(std::move(j));
    } else if (record == "TensorMetadata") {
      require_keys(j, kTensorKeys, "TensorMetadata", where);
      if (!document.contains("modules") || !j.contains("module_path") ||
          !same_json(j["module_path"], document["modules"].back()["path"]))
        throw Error(where + ": a TensorMetadata record that does not follow its module's");
      document["modules"].back()["tensors"].push_back(without(j, {"record", "module_path"}));
    } else {
      throw misplaced("ModuleMetadata");
    }
  }
  if (document.is_null()) throw Error(path + ": holds no records");
  return model ? model_set(std::move(document), path, path) : config_set(document, path, path);
}

// The `--format json` document of inspect-model or inspect-config.
RecordSet read_json_document(const std::string& text, const std::string& path) {
  Json document;
  try {
    document = parse_bounded(text);
  } catch (const JsonTooDeep&) {
    throw Error(path + ": a JSON value nested more than " + std::to_string(kMaxJsonDepth) +
                " levels deep, which no record has");
  } catch (const std::exception&) {
    throw Error(path +
                ": neither jsonl records nor a JSON document (diff reads what inspect-model, "
                "inspect-config or profile writes with --format jsonl or json)");
  }
  if (document.is_object() && document.contains("model_type"))
    return model_set(std::move(document), path, path);
  if (document.is_object() && document.contains("config_type"))
    return config_set(document, path, path);
  if (document.is_object() && document.contains("latency_ms") && document.contains("operators"))
    return profile_set(std::move(document), path, path);
  throw Error(path +
              ": a JSON document that is not inspect-model's, inspect-config's or profile's "
              "(--format json)");
}

// Every field name the records of `set` have, as --ignore may name them.
void collect_field_names(const RecordSet& set, std::set<std::string>& names) {
  for (const auto& [key, value] : set.header.items()) names.insert(key);
  for (const Json& item : set.items)
    for (const auto& [key, value] : item.items())
      if (key != "path" && key != "module_path") names.insert(key);
  for (const Json& op : set.operators)
    for (const auto& [key, value] : op.items())
      if (key != "operator") names.insert(key);
  if (set.tensors)
    for (const char* key : kTensorKeys)
      if (std::string(key) != "name") names.insert(key);
  if (set.methods) names.insert({"arguments", "returns", "outputs", "dimensions"});
  if (set.graph_signature)
    for (const auto& [key, value] : set.graph_signature->items()) names.insert(key);
  if (set.operator_counts) names.insert("calls");
}

// Matches old and new items by key and reports removed, changed (field by field) and added ones.
// A side holding two items of one key (an edited or concatenated file) is refused, naming it.
class Matcher {
 public:
  Matcher(std::vector<Change>& changes, const DiffGate& gate, const RecordSet& old_set,
          const RecordSet& new_set)
      : changes_(changes), gate_(gate), old_source_(old_set.source), new_source_(new_set.source) {}

  /// The fields of `record` (its name in the field tables: what diff compares by default) that
  /// differ between two items.
  void fields(const Json& old_item, const Json& new_item, const char* record,
              const std::string& subject, const Json& path) {
    fields(old_item, new_item, compared_by_default(record), subject, path, {});
  }

  void fields(const Json& old_item, const Json& new_item,
              const std::unordered_set<std::string>& by_default, const std::string& subject,
              const Json& path, std::initializer_list<const char*> identity) {
    for (const auto& [field, old_value] : old_item.items()) {
      if (one_of(field, identity) || !gate_.compares(field, by_default.count(field) > 0)) continue;
      static const Json absent;
      const auto found = new_item.find(field);
      const Json& new_value = found == new_item.end() ? absent : *found;
      if (not_a_change(field, old_value, new_value) || same_json(old_value, new_value)) continue;
      changes_.push_back({"changed", subject, path, field, old_value, new_value,
                          gate_.within(field, old_value, new_value)});
    }
  }

  template <typename KeyOf, typename PathOf>
  void match(const std::vector<Json>& old_items, const std::vector<Json>& new_items,
             const char* record, const std::string& subject, KeyOf key_of, PathOf path_of,
             std::initializer_list<const char*> identity) {
    std::unordered_map<std::string, const Json*> new_by_key, old_by_key;
    const auto index = [&](const std::vector<Json>& items, const std::string& source,
                           std::unordered_map<std::string, const Json*>& by_key) {
      by_key.reserve(items.size());
      for (const auto& item : items)
        if (!by_key.emplace(key_of(item), &item).second)
          throw Error(source + ": two " + subject + " records for " +
                      printable(dump_line(path_of(item)), 200) +
                      "; a record file holds one each (edited, or two files joined?)");
    };
    index(old_items, old_source_, old_by_key);
    index(new_items, new_source_, new_by_key);
    const std::unordered_set<std::string>& by_default = compared_by_default(record);
    for (const auto& item : old_items) {
      const auto it = new_by_key.find(key_of(item));
      if (it == new_by_key.end()) {
        changes_.push_back({"removed", subject, path_of(item), Json(), item, Json()});
        continue;
      }
      fields(item, *it->second, by_default, subject, path_of(item), identity);
    }
    for (const auto& item : new_items)
      if (!old_by_key.count(key_of(item)))
        changes_.push_back({"added", subject, path_of(item), Json(), Json(), item});
  }

 private:
  std::vector<Change>& changes_;
  const DiffGate& gate_;
  const std::string& old_source_;
  const std::string& new_source_;
};

// Attributes of the modules both sides hold, by `module.attribute` (`<root>.name` at the root).
void diff_attributes(const RecordSet& old_set, const RecordSet& new_set,
                     std::vector<Change>& changes) {
  std::unordered_map<std::string, const Json*> new_modules;
  for (const Json& m : new_set.items) new_modules.emplace(m.at("path").get<std::string>(), &m);
  for (const Json& old_module : old_set.items) {
    const std::string module = old_module.at("path").get<std::string>();
    const auto it = new_modules.find(module);
    if (it == new_modules.end()) continue;  // the module's removal says it
    const Json& before = old_module.at("attributes");
    const Json& after = it->second->at("attributes");
    const JsonKeyIndex before_names(before), after_names(after);
    for (const auto& [name, value] : before.items()) {
      const Json path = module + "." + name;
      const Json* now = after_names.find(name);
      if (!now)
        changes.push_back({"removed", "attribute", path, Json(), value, Json()});
      else if (!same_json(value, *now))
        changes.push_back({"changed", "attribute", path, Json(), value, *now});
    }
    for (const auto& [name, value] : after.items())
      if (!before_names.find(name))
        changes.push_back({"added", "attribute", module + "." + name, Json(), Json(), value});
  }
}

// Values inside a field inspect-config does not walk: mappings key by key, other values whole.
void diff_values(const Json& path, const Json& before, const Json& after,
                 std::vector<Change>& changes) {
  if (!before.is_object() || !after.is_object()) {
    if (!same_json(before, after))
      changes.push_back({"changed", "field", path, "value", before, after});
    return;
  }
  const auto at = [&](const std::string& key) {
    Json p = path;
    p.push_back(key);
    return p;
  };
  const JsonKeyIndex before_keys(before), after_keys(after);
  for (const auto& [key, value] : before.items()) {
    if (const Json* now = after_keys.find(key))
      diff_values(at(key), value, *now, changes);
    else
      changes.push_back({"removed", "field", at(key), Json(), value, Json()});
  }
  for (const auto& [key, value] : after.items())
    if (!before_keys.find(key))
      changes.push_back({"added", "field", at(key), Json(), Json(), value});
}

void diff_unwalked(const RecordSet& old_set, const RecordSet& new_set,
                   std::vector<Change>& changes) {
  std::map<std::vector<std::string>, const Json*> after;
  for (const auto& [path, value] : *new_set.unwalked) after.emplace(path, &value);
  for (const auto& [path, value] : *old_set.unwalked)
    if (const auto it = after.find(path); it != after.end())
      diff_values(Json(path), value, *it->second, changes);
}

// Each value `field` has in the set's records (the container, items, tensors, methods, ...).
template <class Visit>
void for_each_value(const RecordSet& set, const std::string& field, Visit visit) {
  const auto in = [&](const Json& item) {
    if (item.is_object() && item.contains(field)) visit(item.at(field));
  };
  in(set.header);
  for (const Json& item : set.items) in(item);
  for (const Json& item : set.operators) in(item);
  for (const auto* list : {&set.tensors, &set.methods, &set.operator_counts})
    if (*list)
      for (const Json& item : **list) in(item);
  if (set.graph_signature) in(*set.graph_signature);
}

bool numeric(const Json& v) {
  if (v.is_null() || v.is_number() || is_big_integer(v)) return !v.is_boolean();
  if (!v.is_object()) return false;
  return std::all_of(v.begin(), v.end(), [](const Json& x) {
    return (x.is_number() && !x.is_boolean()) || is_big_integer(x) || x.is_null();
  });
}

// Every field the options name is one the records have (compared by default or not), and each
// --tolerance field holds numbers; else a UsageError naming the option, the field and the
// closest names.
void check_named_fields(const RecordSet& old_set, const RecordSet& new_set, const DiffGate& gate) {
  std::set<std::string> known;
  collect_field_names(old_set, known);
  collect_field_names(new_set, known);
  for (const auto& [flag, field] : gate.named_fields()) {
    if (!known.count(field)) {
      const auto near =
          closest_matches(field, std::vector<std::string>(known.begin(), known.end()));
      std::string hint;
      for (const auto& n : near) hint += (hint.empty() ? "" : ", ") + n;
      throw UsageError(flag + " " + printable(field, 80) + ": no compared record has this field" +
                       (hint.empty() ? "" : "; the closest: " + hint));
    }
    if (flag != "--tolerance") continue;
    const std::string name = printable(field, 80);  // a lambda captures no structured binding
    for (const RecordSet* set : {&old_set, &new_set})
      for_each_value(*set, field, [&name](const Json& v) {
        if (!numeric(v))
          throw UsageError("--tolerance " + name + "=...: " + name + " is not a number (" +
                           printable(dump_line(v), 80) +
                           "); a limit applies to numbers and to mappings of numbers");
      });
  }
}

}  // namespace

RecordSet record_set(const ModelMetadata& model, const std::string& source) {
  return model_set(to_json(model), source, source);
}

RecordSet record_set(
    const ModelStructureSpec& spec, const std::string& source,
    std::optional<std::vector<std::pair<std::vector<std::string>, Json>>> unwalked) {
  RecordSet set = config_set(to_json(spec), source, source);
  set.unwalked = std::move(unwalked);
  return set;
}

RecordSet read_record_file(const std::string& path) {
  return read_record_file(*InputFile::open(path, "a record file"));
}

RecordSet read_record_file(const InputFile& file) {
  const std::string& path = file.path();
  if (file.size() > kMaxRecordFileBytes)
    throw Error(path + ": larger than " + std::to_string(kMaxRecordFileBytes >> 30) +
                " GiB, more than any record file this tool writes");
  InputFileBuffer buffer(file);
  std::istream in(&buffer);
  // a UTF-8 byte-order mark (editors on Windows write one) is not part of the records
  const std::streamoff start = file.starts_with("\xEF\xBB\xBF") ? 3 : 0;
  in.seekg(start);
  // jsonl when the first line is a whole record; else the indented `--format json` document
  std::string first;
  while (std::getline(in, first) && first.find_first_not_of(" \t\r") == std::string::npos) {
  }
  if (first.find_first_not_of(" \t\r") == std::string::npos)
    throw Error(path + ": holds no records");
  bool jsonl = false;
  try {
    const Json j = parse_bounded(first);
    jsonl = j.is_object() && j.contains("record");
  } catch (const std::exception&) {
  } catch (const JsonTooDeep&) {
    jsonl = true;  // read_jsonl says what is wrong with the line
  }
  in.clear();
  in.seekg(start);
  if (jsonl) return read_jsonl(in, path);
  std::ostringstream text;
  text << in.rdbuf();
  return read_json_document(text.str(), path);
}

RecordDiff diff_records(const RecordSet& old_set, const RecordSet& new_set, const DiffGate& gate) {
  if (old_set.kind != new_set.kind)
    throw UsageError("cannot compare " + std::string(to_string(old_set.kind)) + " records (" +
                     old_set.source + ") with " + to_string(new_set.kind) + " records (" +
                     new_set.source + ")");
  check_named_fields(old_set, new_set, gate);

  RecordDiff diff;
  std::vector<Change>& changes = diff.changes;
  Matcher matcher(changes, gate, old_set, new_set);
  if (old_set.kind == RecordSet::Kind::profile) {
    diff.compared = {"profile", "modules", "operators"};
    matcher.fields(old_set.header, new_set.header, "ProfileSummary", "profile", Json());
    const auto module_key = [](const Json& m) { return key_text(m.at("module_path")); };
    const auto module_path = [](const Json& m) { return m.at("module_path"); };
    matcher.match(old_set.items, new_set.items, "ModuleProfile", "module", module_key, module_path,
                  {"module_path"});
    const auto op_key = [](const Json& o) { return key_text(o.at("operator")); };
    const auto op_name = [](const Json& o) { return o.at("operator"); };
    matcher.match(old_set.operators, new_set.operators, "OperatorProfile", "operator", op_key,
                  op_name, {"operator"});
    return diff;
  }
  const bool model = old_set.kind == RecordSet::Kind::model;
  diff.compared = model ? std::vector<std::string>{"model", "modules"}
                        : std::vector<std::string>{"config", "fields"};

  // the container's fields both sides hold (byte totals only with --tensors on both)
  Json old_header = Json::object();
  for (const auto& [field, value] : old_set.header.items())
    if (new_set.header.contains(field)) old_header[field] = value;
  matcher.fields(old_header, new_set.header, model ? "ModelMetadata" : "ModelStructureSpec",
                 to_string(old_set.kind), Json());

  const auto by_path = [](const Json& item) { return key_text(item.at("path")); };
  const auto path_of = [](const Json& item) { return item.at("path"); };
  matcher.match(old_set.items, new_set.items, model ? "ModuleMetadata" : "ConfigFieldSpec",
                model ? "module" : "field", by_path, path_of, {"path", "attributes"});
  if (!model) {
    if (old_set.unwalked && new_set.unwalked && gate.compares("value", true))
      diff_unwalked(old_set, new_set, changes);
    return diff;
  }
  if (old_set.has_attributes && new_set.has_attributes && gate.compares("attributes", true)) {
    diff.compared.push_back("attributes");
    diff_attributes(old_set, new_set, changes);
  }
  if (old_set.tensors && new_set.tensors) {
    diff.compared.push_back("tensors");
    const auto key = [](const Json& t) { return tensor_key(t); };
    const auto name = [](const Json& t) { return Json(tensor_key(t)); };
    matcher.match(*old_set.tensors, *new_set.tensors, "TensorMetadata", "tensor", key, name,
                  {"module_path", "name"});
  }
  // a TorchScript method and an exported program's forward are not alike (contract 10.3)
  if (old_set.methods && new_set.methods && old_set.torch_export == new_set.torch_export) {
    diff.compared.push_back("signatures");
    const auto key = [](const Json& m) { return m.at("name").get<std::string>(); };
    const auto name = [](const Json& m) { return m.at("name"); };
    matcher.match(*old_set.methods, *new_set.methods, "MethodSignature", "signature", key, name,
                  {"name"});
  }
  if (old_set.graph_signature && new_set.graph_signature) {
    diff.compared.push_back("graph_signature");
    matcher.fields(*old_set.graph_signature, *new_set.graph_signature, "GraphSignature",
                   "graph_signature", Json());
  }
  if (old_set.operator_counts && new_set.operator_counts) {
    diff.compared.push_back("operators");
    const auto key = [](const Json& c) {
      return dump_line(c.at("module_path")) + " " + dump_line(c.at("operator"));
    };
    const auto path = [](const Json& c) {
      return Json::array({c.at("module_path"), c.at("operator")});
    };
    matcher.match(*old_set.operator_counts, *new_set.operator_counts, "OperatorCount", "operator",
                  key, path, {"module_path", "operator"});
  }
  return diff;
}

}  // namespace vin::diagnostics
