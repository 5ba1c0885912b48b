#include "vin/diagnostics/diff/record_set_parts.h"

#include <cstring>
#include <unordered_map>

#include "vin/diagnostics/json/bounded_json.h"
#include "vin/diagnostics/json/json_encoding.h"
#include "vin/diagnostics/json/model_document.h"
#include "vin/diagnostics/json/record_fields.h"

namespace vin::diagnostics::diff_detail {

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
const std::vector<const char*> kModuleProfileKeys = required_fields("ModuleProfile");
const std::vector<const char*> kOperatorProfileKeys = required_fields("OperatorProfile");
const std::vector<const char*> kProfileSummaryKeys = required_fields("ProfileSummary");

const Names& names() {
  static const Names n;
  return n;
}

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

Json parse_bounded(const std::string& text) { return parse_bounded_json(text, kMaxJsonDepth); }
Json parse_text(std::string_view text) { return parse_bounded(std::string(text)); }

bool same_text(const FieldText& a, const FieldText& b) {
  return a.size == b.size && std::memcmp(a.data, b.data, a.size) == 0;
}

// Whether `name` is one of `names`.
bool one_of(const std::string& name, std::initializer_list<const char*> names) {
  return std::any_of(names.begin(), names.end(), [&](const char* n) { return name == n; });
}

Json without(const Json& j, const std::vector<const char*>& keys) {
  Json out = Json::object();
  for (auto it = j.begin(); it != j.end(); ++it) {
    const std::string& key = it.key();  // a name, not a structured binding: C++17's lambdas
                                        // cannot capture those (clang refuses)
    if (std::find_if(keys.begin(), keys.end(), [&](const char* k) { return key == k; }) ==
        keys.end())
      out[key] = it.value();
  }
  return out;
}

// What a model's `--format json` document holds beside ModelMetadata's own fields: its lists,
// and the containers of a .pt2 (ExportArchive: file, layout, versions) and of a weights file
// (WeightsFile: file, format, shards), which are not the model: not compared.
const std::vector<const char*> kModelDocumentParts = [] {
  std::vector<const char*> keys = {"record"};
  for (std::size_t i = 0; i < kModelPartCount; ++i) keys.push_back(kModelParts[i].json_key);
  return keys;
}();

void require_keys(const Json& j, const std::vector<const char*>& keys, const char* record,
                  const std::string& where) {
  if (!j.is_object()) throw Error(where + ": a " + record + " that is not a JSON object");
  for (const char* key : keys)
    if (!j.contains(key)) throw Error(where + ": a " + record + " without '" + key + "'");
}

const Required kModuleRequired("ModuleMetadata", kModuleKeys);
const Required kTensorRequired("TensorMetadata", kTensorKeys);
const Required kMethodRequired("MethodSignature", kMethodKeys);
const Required kOperatorCountRequired("OperatorCount", kOperatorCountKeys);
const Required kFieldRequired("ConfigFieldSpec", kFieldKeys);
const Required kModuleProfileRequired("ModuleProfile", kModuleProfileKeys);
const Required kOperatorProfileRequired("OperatorProfile", kOperatorProfileKeys);

// A field one side cannot know is not a change (contract 10.3): a torch.export archive records no
// training mode, and no type for a module no node of which ran (null there, known in a .pt).
// Nor is a class of the script that made the model: TorchScript keeps no `__main__.` in its
// name (`Net` in a .pt, `__main__.Net` in a .pt2).
bool not_a_change(const std::string& field, const Json& a, const Json& b) {
  // what one side's format does not say: data_crc32 in records saved before it was written (or
  // a storage no record holds), a safetensors tensor's device and requires_grad
  if ((field == "data_crc32" || field == "device" || field == "requires_grad") &&
      a.is_null() != b.is_null())
    return true;
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

// Where a set's lists keep their texts: one store for all of them.
void share_store(RecordSet& set) {
  const auto store = set.items.shared_store();
  set.operators = RecordList(store);
}
RecordList& emplace_list(std::optional<RecordList>& list, const RecordSet& set) {
  if (!list) list.emplace(set.items.shared_store());
  return *list;
}

// A module's tensors (a `--format json` document's, or a jsonl module line's own `tensors`) as
// TensorMetadata items with the module's path first.
void add_tensors(RecordSet& set, const Json& tensors, std::string_view module_path_text,
                 const std::string& where) {
  RecordList& list = emplace_list(set.tensors, set);
  if (!tensors.is_array()) throw Error(where + ": a module's \"tensors\" that is not a list");
  for (const Json& tensor : tensors) {
    require_keys(tensor, kTensorKeys, "TensorMetadata", where);
    list.add_field(names().module_path, module_path_text);
    for (auto it = tensor.begin(); it != tensor.end(); ++it)
      if (it.key() != "record" && it.key() != "module_path")
        list.add_field(field_name(it.key()), list.store().keep(dump_line(*it)));
    list.end_record();
  }
}

}  // namespace vin::diagnostics::diff_detail
