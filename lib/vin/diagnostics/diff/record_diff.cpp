#include "vin/diagnostics/diff/record_diff.h"

#include <algorithm>
#include <cstring>
#include <deque>
#include <map>
#include <optional>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include "vin/diagnostics/diff/diff_gate.h"
#include "vin/diagnostics/records/bounded_json.h"
#include "vin/diagnostics/records/error.h"
#include "vin/diagnostics/records/large_memory.h"
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
const std::vector<const char*> kModuleProfileKeys = required_fields("ModuleProfile");
const std::vector<const char*> kOperatorProfileKeys = required_fields("OperatorProfile");
const std::vector<const char*> kProfileSummaryKeys = required_fields("ProfileSummary");

// The names this file looks up in every record, numbered once.
struct Names {
  FieldName record = field_name("record");
  FieldName path = field_name("path");
  FieldName module_path = field_name("module_path");
  FieldName name = field_name("name");
  FieldName operator_ = field_name("operator");
  FieldName attributes = field_name("attributes");
  FieldName tensors = field_name("tensors");
  FieldName storage_crc32 = field_name("storage_crc32");
  FieldName data_crc32 = field_name("data_crc32");
};
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

// The root's path as a record's JSON text holds it (a checkpoint's tensors outside its state
// dict are on the root).
constexpr std::string_view kRootPathText = "\"<root>\"";

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

// What a model's `--format json` document holds beside ModelMetadata's own fields: its lists,
// and the containers of a .pt2 (ExportArchive: file, layout, versions) and of a weights file
// (WeightsFile: file, format, shards), which are not the model: not compared.
const std::initializer_list<const char*> kModelDocumentParts = {
    "record", "methods", "modules", "export_archive", "weights_file", "checkpoint_values",
    "checkpoint_tensors", "operators", "graph_signature"};

void require_keys(const Json& j, const std::vector<const char*>& keys, const char* record,
                  const std::string& where) {
  if (!j.is_object()) throw Error(where + ": a " + record + " that is not a JSON object");
  for (const char* key : keys)
    if (!j.contains(key)) throw Error(where + ": a " + record + " without '" + key + "'");
}

// The fields a record of a list must have, by name and number (looked up a million times).
struct Required {
  Required(const char* record_, const std::vector<const char*>& keys_)
      : record(record_), keys(keys_) {
    for (const char* key : keys) names.push_back(field_name(key));
  }
  const char* record;
  std::vector<const char*> keys;
  std::vector<FieldName> names;
};
const Required kModuleRequired("ModuleMetadata", kModuleKeys);
const Required kTensorRequired("TensorMetadata", kTensorKeys);
const Required kMethodRequired("MethodSignature", kMethodKeys);
const Required kOperatorCountRequired("OperatorCount", kOperatorCountKeys);
const Required kFieldRequired("ConfigFieldSpec", kFieldKeys);
const Required kModuleProfileRequired("ModuleProfile", kModuleProfileKeys);
const Required kOperatorProfileRequired("OperatorProfile", kOperatorProfileKeys);

// The same for a record of a list (always an object); `where` says where it was read.
template <class Where>
void require_keys(RecordList::Record r, const Required& required, Where where) {
  for (std::size_t k = 0; k < required.names.size(); ++k)
    if (!r.has(required.names[k]))
      throw Error(where() + ": a " + required.record + " without '" + required.keys[k] + "'");
}

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

// The model side from its `--format json` document shape (to_json(ModelMetadata)).
RecordSet model_set(const Json& document, const std::string& source, const std::string& where) {
  RecordSet set;
  set.kind = RecordSet::Kind::model;
  set.source = source;
  share_store(set);
  require_keys(document, kModelKeys, "ModelMetadata", where);
  set.header = without(document, kModelDocumentParts);
  if (document.contains("methods")) {
    RecordList& methods = emplace_list(set.methods, set);
    for (const Json& method : document.at("methods")) {
      require_keys(method, kMethodKeys, "MethodSignature", where);
      methods.add_object(method, {"record"});
    }
  }
  set.torch_export = document.contains("export_archive");
  set.weights_file = document.contains("weights_file");
  if (document.contains("graph_signature")) {
    const Json& signature = document.at("graph_signature");
    require_keys(signature, kGraphSignatureKeys, "GraphSignature", where);
    set.graph_signature = without(signature, {"record"});
  }
  if (document.contains("operators")) {
    const Json& counts = document.at("operators");
    if (!counts.is_array()) throw Error(where + ": \"operators\" is not a list");
    RecordList& list = emplace_list(set.operator_counts, set);
    for (const Json& count : counts) {
      require_keys(count, kOperatorCountKeys, "OperatorCount", where);
      list.add_object(count, {"record"});
    }
  }
  if (set.header.contains("parameter_bytes")) emplace_list(set.tensors, set);
  const Json& modules = list_at(document, "modules");
  if (!modules.is_array()) throw Error(where + ": \"modules\" is not a list");
  set.has_attributes = !modules.empty() && !set.torch_export;
  for (const Json& module : modules) {
    require_keys(module, kModuleKeys, "ModuleMetadata", where);
    set.has_attributes = set.has_attributes && module.contains("attributes");
    set.items.add_object(module, {"tensors", "record"});
    if (module.contains("tensors"))
      add_tensors(set, module.at("tensors"), set.items[set.items.size() - 1].find(names().path)->text(),
                  where);
  }
  // a checkpoint's tensors outside its state dict, on the root under their whole keys
  if (document.contains("checkpoint_tensors"))
    add_tensors(set, document.at("checkpoint_tensors"), kRootPathText, where);
  return set;
}

RecordSet config_set(const Json& document, const std::string& source, const std::string& where) {
  RecordSet set;
  set.kind = RecordSet::Kind::config;
  set.source = source;
  share_store(set);
  require_keys(document, kSpecKeys, "ModelStructureSpec", where);
  set.header = without(document, {"fields", "record"});
  const Json& fields = list_at(document, "fields");
  if (!fields.is_array()) throw Error(where + ": \"fields\" is not a list");
  for (const Json& field : fields) {
    require_keys(field, kFieldKeys, "ConfigFieldSpec", where);
    set.items.add_object(field, {"record"});
  }
  return set;
}

// The profile side from its `--format json` document shape (write_profile), every field: those
// not compared by default (times, memory) are when --only or --tolerance names them.
RecordSet profile_set(const Json& document, const std::string& source, const std::string& where) {
  RecordSet set;
  set.kind = RecordSet::Kind::profile;
  set.source = source;
  share_store(set);
  require_keys(document, kProfileSummaryKeys, "ProfileSummary", where);
  set.header = without(document, {"modules", "operators", "record"});
  const Json& modules = list_at(document, "modules");
  const Json& operators = list_at(document, "operators");
  if (!modules.is_array() || !operators.is_array())
    throw Error(where + ": \"modules\" or \"operators\" is not a list");
  for (const Json& module : modules) {
    require_keys(module, kModuleProfileKeys, "ModuleProfile", where);
    if (!module.at("module_path").is_string())
      throw Error(where + ": a ModuleProfile whose module_path is not a string");
    set.items.add_object(module, {"record"});
  }
  for (const Json& op : operators) {
    require_keys(op, kOperatorProfileKeys, "OperatorProfile", where);
    if (!op.at("operator").is_string())
      throw Error(where + ": an OperatorProfile whose operator is not a string");
    set.operators.add_object(op, {"record"});
  }
  return set;
}

// A jsonl record file's lines, each scanned (scan_json_object) into its members without a DOM.
// The file is read a piece at a time into one buffer; what a record keeps of its line (the texts
// of its values) is copied into its list (RecordList::add_field_copied), so that a file of a
// million records costs the memory of its values, not of its lines. Blank lines are skipped; a
// line that is not a JSON object with a string "record" is refused, naming FILE:LINE.
class RecordLines {
 public:
  /// The lines of `file` from byte `start` on (after a byte-order mark).
  RecordLines(const InputFile& file, std::uint64_t start)
      : file_(file),
        path_(file.path()),
        file_offset_(start),
        // a piece, or the whole of a smaller file (and a byte to see its end)
        buffer_(static_cast<std::size_t>(std::min<std::uint64_t>(kPieceBytes, file.size() + 1))) {}

  /// The next line that is not blank, without reading it as a record (the first line tells
  /// jsonl from a JSON document); false at the end.
  bool next_line() {
    while (read_line()) {
      ++number_;
      if (line_.find_first_not_of(" \t\r") != std::string_view::npos) return true;
    }
    return false;
  }

  /// Reads the next record; false at the end. Throws Error naming a line that is not one.
  bool next() {
    if (!next_line()) return false;
    read_record();
    return true;
  }
  /// Reads the line next_line() found as a record. Throws Error naming it when it is not one.
  void read_record() {
    members_.clear();
    const JsonScan scan =
        scan_json_object(line_, kMaxJsonDepth, [this](std::string_view key, std::string_view v) {
          members_.push_back({names_.find(key, members_.size()), v});
        });
    if (scan == JsonScan::too_deep)
      throw Error(where() + ": a JSON value nested more than " + std::to_string(kMaxJsonDepth) +
                  " levels deep, which no record has");
    if (scan == JsonScan::not_json)
      throw Error(where() +
                  ": not a JSON line (diff reads the jsonl or json that inspect-model, "
                  "inspect-config or profile writes)");
    const std::string_view* record = nullptr;
    for (const Member& m : members_)
      if (m.name == names().record) record = &m.text;  // a repeated key: the last one
    if (scan != JsonScan::object || !record || record->front() != '"')
      throw Error(where() + ": a line without a \"record\" key");
    record_ = json_string_value(*record);
  }

  /// The line found.
  std::string_view line() const { return line_; }
  /// The record name of the line read ("ModuleMetadata").
  const std::string& record() const { return record_; }
  /// FILE:LINE of the line read, for messages.
  std::string where() const { return path_ + ":" + std::to_string(number_); }
  /// The line as a parsed JSON object without its "record" key.
  Json object() const { return without(parse_text(line_), {"record"}); }
  /// The line's members but those in `leave_out` (and "record") added to `list` as a record.
  void add_to(RecordList& list, std::initializer_list<FieldName> leave_out = {}) const {
    for (const Member& m : members_)
      if (m.name != names().record &&
          std::find(leave_out.begin(), leave_out.end(), m.name) == leave_out.end())
        list.add_field_copied(m.name, m.text);
    list.end_record();
  }
  /// The text of the line's member `name` (its last), or nothing; valid until the next line.
  std::optional<std::string_view> member(FieldName name) const {
    std::optional<std::string_view> out;
    for (const Member& m : members_)
      if (m.name == name) out = m.text;
    return out;
  }

  /// Room in `list` (whose first record was just added from this line) for a record in every
  /// line of the rest of the file, each as long as this one, with as many fields: a million
  /// records without the list growing 20 times. Only reserved: what is not used is never touched.
  void make_room(RecordList& list) const {
    if (list.size() != 1) return;
    const std::uint64_t records = file_.size() / (line_.size() + 1) + 16;
    list.reserve(static_cast<std::size_t>(records),
                 static_cast<std::size_t>(records * list[0].size()));
  }

 private:
  static constexpr std::size_t kPieceBytes = std::size_t{4} << 20;

  struct Member {
    FieldName name;
    std::string_view text;
  };

  // The next line (without its newline) into line_; false at the end of the file.
  bool read_line() {
    for (;;) {
      const char* from = buffer_.data() + begin_;
      if (const void* newline = std::memchr(from, '\n', end_ - begin_)) {
        const auto length = static_cast<std::size_t>(static_cast<const char*>(newline) - from);
        line_ = {from, length};
        begin_ += length + 1;
        return true;
      }
      if (at_end_) {
        if (begin_ == end_) return false;
        line_ = {from, end_ - begin_};  // the last line, without a newline
        begin_ = end_;
        return true;
      }
      // the line goes on past the buffer: keep what is read, and read on (a longer line: more
      // room, up to the file's own size)
      std::memmove(buffer_.data(), from, end_ - begin_);
      end_ -= begin_;
      begin_ = 0;
      if (end_ == buffer_.size()) buffer_.resize(buffer_.size() * 2);
      const std::size_t got =
          file_.read_at(file_offset_, buffer_.data() + end_, buffer_.size() - end_);
      file_offset_ += got;
      end_ += got;
      at_end_ = got == 0;
    }
  }

  const InputFile& file_;
  const std::string& path_;
  std::uint64_t file_offset_;
  std::vector<char> buffer_;
  std::size_t begin_ = 0, end_ = 0;  // the bytes read and not yet handed out
  bool at_end_ = false;
  std::size_t number_ = 0;
  std::string_view line_;
  std::vector<Member> members_;
  std::string record_;
  FieldNameCache names_;
};

bool json_string(std::string_view text) { return !text.empty() && text.front() == '"'; }

// profile's jsonl from its first record on: ModuleProfile lines, OperatorProfile lines, then one
// ProfileSummary line.
RecordSet read_profile_jsonl(RecordLines& lines, RecordSet set, const std::string& path) {
  set.kind = RecordSet::Kind::profile;
  std::optional<Json> summary_counts;
  const auto where = [&lines] { return lines.where(); };
  do {
    const std::string& record = lines.record();
    if (summary_counts)
      throw Error(lines.where() + ": a " + printable(record, 80) +
                  " record after the ProfileSummary");
    if (record == "ModuleProfile") {
      lines.add_to(set.items);
      lines.make_room(set.items);
      require_keys(set.items[set.items.size() - 1], kModuleProfileRequired, where);
      if (!json_string(lines.member(names().module_path).value_or("")))
        throw Error(path + ": a ModuleProfile whose module_path is not a string");
    } else if (record == "OperatorProfile") {
      lines.add_to(set.operators);
      require_keys(set.operators[set.operators.size() - 1], kOperatorProfileRequired, where);
      if (!json_string(lines.member(names().operator_).value_or("")))
        throw Error(path + ": an OperatorProfile whose operator is not a string");
    } else if (record == "ProfileSummary") {
      const Json j = lines.object();
      require_keys(j, kProfileSummaryKeys, "ProfileSummary", lines.where());
      require_keys(j, {"modules", "operators"}, "ProfileSummary", lines.where());
      set.header = without(j, {"modules", "operators"});
      summary_counts = Json::object({{"modules", j.at("modules")}, {"operators", j.at("operators")}});
    } else {
      throw Error(lines.where() + ": a " + printable(record, 80) + " record among profile records");
    }
  } while (lines.next());
  if (!summary_counts)
    throw Error(path + ": profile records without their ProfileSummary (cut short?)");
  // the summary counts the records profile wrote before it
  const Json modules(set.items.size()), operators(set.operators.size());
  if (!same_json(summary_counts->at("modules"), modules) ||
      !same_json(summary_counts->at("operators"), operators))
    throw Error(path + ": the ProfileSummary counts " + dump_line(summary_counts->at("modules")) +
                " modules and " + dump_line(summary_counts->at("operators")) +
                " operators, the file holds " + dump_line(modules) + " and " +
                dump_line(operators) + " (cut short, or edited?)");
  return set;
}

bool is_profile_record(const std::string& record) {
  return record == "ModuleProfile" || record == "OperatorProfile" || record == "ProfileSummary";
}

// inspect-model's or inspect-config's jsonl: the container line first (a .pt2's ExportArchive
// before it), then its items in the order the command writes them.
RecordSet read_jsonl(RecordLines& lines, RecordSet set, const std::string& path) {
  lines.read_record();
  if (is_profile_record(lines.record())) return read_profile_jsonl(lines, std::move(set), path);
  std::optional<Json> header;
  bool model = false;
  bool export_archive = false;
  bool weights_file = false;
  bool modules_begun = false;
  do {
    const std::string& record = lines.record();
    const auto where = [&lines] { return lines.where(); };
    if (!header && record == "ExportArchive" && !export_archive) {
      export_archive = true;  // a .pt2's records: the container first
      continue;
    }
    if (!header && record == "WeightsFile" && !weights_file) {
      weights_file = true;  // a weights file's records: the container first
      continue;
    }
    // a checkpoint's values: after its model (before it in what earlier versions wrote)
    if (record == "CheckpointValue" && weights_file) continue;
    if (!header) {
      Json j = lines.object();
      if (record == "ModelMetadata") {
        require_keys(j, kModelKeys, "ModelMetadata", where());
        model = true;
      } else if (record == "ModelStructureSpec") {
        require_keys(j, kSpecKeys, "ModelStructureSpec", where());
      } else {
        throw Error(where() + ": starts with a " + printable(record, 80) +
                    " record; expected ModelMetadata (inspect-model), ModelStructureSpec "
                    "(inspect-config) or profile's records");
      }
      // what the `--format json` document nests is not the container's (an edited line)
      header = model ? without(j, kModelDocumentParts) : without(j, {"fields"});
      continue;
    }
    const auto misplaced = [&](const char* expected) {
      return Error(where() + ": a " + printable(record, 80) + " record among " + expected +
                   " records");
    };
    if (!model) {
      if (record != "ConfigFieldSpec") throw misplaced("ConfigFieldSpec");
      lines.add_to(set.items);
      lines.make_room(set.items);
      require_keys(set.items[set.items.size() - 1], kFieldRequired, where);
    } else if (record == "MethodSignature") {
      if (modules_begun) throw misplaced("ModuleMetadata");
      RecordList& methods = emplace_list(set.methods, set);
      lines.add_to(methods);
      require_keys(methods[methods.size() - 1], kMethodRequired, where);
    } else if (record == "GraphSignature") {
      if (modules_begun || set.graph_signature) throw misplaced("ModuleMetadata");
      Json j = lines.object();
      require_keys(j, kGraphSignatureKeys, "GraphSignature", where());
      set.graph_signature = std::move(j);
    } else if (record == "OperatorCount") {
      RecordList& counts = emplace_list(set.operator_counts, set);
      lines.add_to(counts);
      require_keys(counts[counts.size() - 1], kOperatorCountRequired, where);
    } else if (record == "ModuleMetadata") {
      if (set.operator_counts) throw misplaced("OperatorCount");
      modules_begun = true;
      lines.add_to(set.items, {names().tensors});
      lines.make_room(set.items);
      const auto module = set.items[set.items.size() - 1];
      require_keys(module, kModuleRequired, where);
      set.has_attributes = (set.items.size() == 1 || set.has_attributes) &&
                           module.has(names().attributes);
      if (const auto tensors = lines.member(names().tensors))
        add_tensors(set, parse_text(*tensors), module.find(names().path)->text(), where());
    } else if (record == "TensorMetadata" && weights_file && modules_begun &&
               lines.member(names().module_path) == std::optional(kRootPathText)) {
      // a checkpoint's tensor outside its state dict: on the root, after the modules
      RecordList& tensors = emplace_list(set.tensors, set);
      lines.add_to(tensors);
      require_keys(tensors[tensors.size() - 1], kTensorRequired, where);
    } else if (record == "TensorMetadata") {
      const auto module_path = lines.member(names().module_path);
      const auto module = set.items.empty() ? std::nullopt
                                            : std::optional(set.items[set.items.size() - 1]);
      const bool follows = module && module_path &&
                           (*module_path == module->find(names().path)->text() ||
                            same_json(parse_text(*module_path), module->value(names().path)));
      RecordList& tensors = emplace_list(set.tensors, set);
      if (follows) {
        tensors.add_field(names().module_path, module->find(names().path)->text());
        lines.add_to(tensors, {names().module_path});
      } else {
        lines.add_to(tensors);  // for the message below: the keys first, as before
      }
      require_keys(tensors[tensors.size() - 1], kTensorRequired, where);
      if (!follows)
        throw Error(where() + ": a TensorMetadata record that does not follow its module's");
    } else {
      throw misplaced("ModuleMetadata");
    }
  } while (lines.next());
  if (!header) throw Error(path + ": holds no records");
  if (!model) {
    set.kind = RecordSet::Kind::config;
    set.header = std::move(*header);
    return set;
  }
  set.kind = RecordSet::Kind::model;
  set.torch_export = export_archive;
  set.weights_file = weights_file;
  set.has_attributes = set.has_attributes && !set.items.empty() && !export_archive;
  // a .pt2's container (ExportArchive: file, layout, versions) is not the model: not compared
  set.header = std::move(*header);
  if (set.header.contains("parameter_bytes")) emplace_list(set.tensors, set);
  return set;
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
    return model_set(document, path, path);
  if (document.is_object() && document.contains("config_type"))
    return config_set(document, path, path);
  if (document.is_object() && document.contains("latency_ms") && document.contains("operators"))
    return profile_set(document, path, path);
  throw Error(path +
              ": a JSON document that is not inspect-model's, inspect-config's or profile's "
              "(--format json)");
}

// The lists a set holds, each with the name diff's field tables give its records.
template <class Visit>
void for_each_list(const RecordSet& set, Visit visit) {
  visit(set.items);
  visit(set.operators);
  for (const auto* list : {&set.tensors, &set.methods, &set.operator_counts})
    if (*list) visit(**list);
}

// Every field name the records of `set` have, as --ignore may name them; `matched_by` gets
// those that identify a record (a module's path, a tensor's name), which are never compared.
void collect_field_names(const RecordSet& set, std::set<std::string>& out,
                         std::set<std::string>& matched_by) {
  for (const auto& [key, value] : set.header.items()) out.insert(key);
  const auto add = [&](const RecordList& list, std::initializer_list<const char*> identity) {
    for (const FieldName name : list.names()) {
      const std::string& text = field_name_text(name);
      (one_of(text, identity) ? matched_by : out).insert(text);
    }
  };
  add(set.items, {"path", "module_path"});
  add(set.operators, {"operator"});
  if (set.tensors) {
    for (const char* key : kTensorKeys)
      if (std::string(key) != "name") out.insert(key);
    add(*set.tensors, {"name", "module_path"});  // a weights file's key, data_crc32, ...
  }
  if (set.methods) out.insert({"arguments", "returns", "outputs", "dimensions"});
  if (set.graph_signature)
    for (const auto& [key, value] : set.graph_signature->items()) out.insert(key);
  if (set.operator_counts) out.insert("calls");
}

bool numeric(const Json& v) {
  if (v.is_null() || v.is_number() || is_big_integer(v)) return !v.is_boolean();
  if (!v.is_object()) return false;
  return std::all_of(v.begin(), v.end(), [](const Json& x) {
    return (x.is_number() && !x.is_boolean()) || is_big_integer(x) || x.is_null();
  });
}

// Each value `field` has in the set's records (the container, items, tensors, methods, ...).
template <class Visit>
void for_each_value(const RecordSet& set, const std::string& field, Visit visit) {
  const auto in = [&](const Json& item) {
    if (item.is_object() && item.contains(field)) visit(item.at(field));
  };
  in(set.header);
  if (set.graph_signature) in(*set.graph_signature);
  const FieldName name = field_name(field);
  for_each_list(set, [&](const RecordList& list) {
    for (std::size_t i = 0; i < list.size(); ++i)
      if (const FieldText* f = list[i].find(name)) {
        // a number or null as written, without parsing it (a million of them)
        const char first = f->size ? f->data[0] : ' ';
        if (first == '-' || (first >= '0' && first <= '9') || f->text() == "null") continue;
        visit(parse_text(f->text()));
      }
  });
}

// Every field the options name is one the records have (compared by default or not), and each
// --tolerance field holds numbers; else a UsageError naming the option, the field and the
// closest names.
void check_named_fields(const RecordSet& old_set, const RecordSet& new_set, const DiffGate& gate) {
  std::set<std::string> known, matched_by;
  collect_field_names(old_set, known, matched_by);
  collect_field_names(new_set, known, matched_by);
  for (const auto& [flag, field] : gate.named_fields()) {
    if (!known.count(field) && matched_by.count(field))
      throw UsageError(flag + " " + field_in_message(field) + ": records are matched by " +
                       field_in_message(field) + ", which is never compared");
    if (!known.count(field)) {
      const auto near =
          closest_matches(field, std::vector<std::string>(known.begin(), known.end()));
      std::string hint;
      for (const auto& n : near) hint += (hint.empty() ? "" : ", ") + n;
      throw UsageError(flag + " " + field_in_message(field) +
                       ": no compared record has this field" +
                       (hint.empty() ? "" : "; the closest: " + hint));
    }
    if (flag != "--tolerance") continue;
    const std::string name = field_in_message(field);  // a lambda captures no structured binding
    for (const RecordSet* set : {&old_set, &new_set})
      for_each_value(*set, field, [&name](const Json& v) {
        if (!numeric(v))
          throw UsageError("--tolerance " + name + "=...: " + name + " is not a number (" +
                           printable(dump_line(v), 80) +
                           "); a limit applies to numbers and to mappings of numbers");
      });
  }
}

// Which fields of one kind of record diff compares: the gate's answer for each name, asked once.
class FieldChoice {
 public:
  /// `within`: the only fields that may be compared (all where empty)
  FieldChoice(const DiffGate& gate, const char* record,
              std::initializer_list<const char*> identity,
              std::initializer_list<const char*> within = {})
      : gate_(gate), by_default_(compared_by_default(record)), identity_(identity),
        within_(within) {}

  bool compares(FieldName name) {
    if (name >= answers_.size()) answers_.resize(name + 1, kUnknown);
    if (answers_[name] == kUnknown) {
      const std::string& field = field_name_text(name);
      answers_[name] = !one_of(field, identity_) &&
                       (within_.size() == 0 || one_of(field, within_)) &&
                       gate_.compares(field, by_default_.count(field));
    }
    return answers_[name] == 1;
  }

 private:
  static constexpr signed char kUnknown = -1;
  const DiffGate& gate_;
  const std::unordered_set<std::string>& by_default_;
  std::initializer_list<const char*> identity_;
  std::initializer_list<const char*> within_;
  std::vector<signed char> answers_;
};

// A record's key as text to match it by: the canonical JSON of its key value (a plain string is
// its own; anything else printed by dump_line and kept here).
class KeyTexts {
 public:
  std::string_view of(std::string_view text) {
    if (is_plain_json_string(text)) return text;
    return keep(dump_line(parse_text(text)));
  }
  std::string_view keep(std::string text) {
    kept_.push_back(std::move(text));
    return kept_.back();
  }

 private:
  std::deque<std::string> kept_;  // a deque: what was kept never moves
};

// The keys of one side's records. Repeated keys are found by sorting the keys' hashes (a pass
// over a million records in order, where a hash table's inserts would each miss the cache), and
// records are found where they are expected (the same order on both sides: the common case),
// else through an index made the first time one is not (open addressing over a power-of-two
// table of slots: the record's number and its key's hash).
class SideKeys {
 public:
  static constexpr std::size_t npos = static_cast<std::size_t>(-1);

  template <typename KeyOf>
  SideKeys(const RecordList& items, KeyOf key_of, KeyTexts& texts) {
    if (items.size() >= UINT32_MAX) throw Error("more than 4 billion records of one kind");
    keys_.reserve(items.size());
    hashes_.reserve(items.size());
    for (std::size_t i = 0; i < items.size(); ++i) {
      keys_.push_back(key_of(items[i], texts));
      hashes_.push_back(std::hash<std::string_view>{}(keys_.back()));
    }
    find_repeated();
  }

  /// The first record whose key an earlier record has.
  std::optional<std::size_t> repeated() const { return repeated_; }

  /// The record whose key is `other`'s record i's, looked for first at `expected`; or npos.
  std::size_t find(const SideKeys& other, std::size_t i, std::size_t expected) {
    const std::string_view key = other.keys_[i];
    const std::size_t hash = other.hashes_[i];
    if (expected < keys_.size() && hashes_[expected] == hash && keys_[expected] == key)
      return expected;
    if (slots_.empty()) make_index();
    for (std::size_t s = hash & mask_;; s = (s + 1) & mask_) {
      const Slot slot = slots_[s];
      if (slot.record == 0) return npos;
      if (slot.tag == tag_of(hash) && keys_[slot.record - 1] == key) return slot.record - 1;
    }
  }

 private:
  struct Slot {
    std::uint32_t record = 0;  // the record's number + 1; 0: empty
    std::uint32_t tag = 0;     // the hash's high bits
  };
  static std::uint32_t tag_of(std::size_t hash) {
    return static_cast<std::uint32_t>(static_cast<std::uint64_t>(hash) >> 32);
  }

  // The records sorted by their hash's high 32 bits (a stable radix sort: equal hashes stay in
  // record order); within a run of equal ones, keys compared.
  void find_repeated() {
    const std::size_t n = keys_.size();
    std::vector<std::uint64_t, LargeAllocator<std::uint64_t>> sorted(n), scratch(n);
    for (std::size_t i = 0; i < n; ++i)
      sorted[i] = static_cast<std::uint64_t>(tag_of(hashes_[i])) << 32 | i;
    for (int shift = 32; shift < 64; shift += 8) {
      std::size_t counts[257] = {};
      for (const std::uint64_t v : sorted) ++counts[((v >> shift) & 0xFF) + 1];
      for (int b = 0; b < 256; ++b) counts[b + 1] += counts[b];
      for (const std::uint64_t v : sorted) scratch[counts[(v >> shift) & 0xFF]++] = v;
      sorted.swap(scratch);
    }
    for (std::size_t run = 0; run < n;) {
      std::size_t end = run + 1;
      while (end < n && sorted[end] >> 32 == sorted[run] >> 32) ++end;
      for (std::size_t b = run + 1; b < end; ++b)
        for (std::size_t a = run; a < b; ++a) {
          const auto first = static_cast<std::size_t>(sorted[a] & UINT32_MAX);
          const auto second = static_cast<std::size_t>(sorted[b] & UINT32_MAX);
          if (keys_[first] == keys_[second] && (!repeated_ || second < *repeated_))
            repeated_ = second;
        }
      run = end;
    }
  }

  void make_index() {
    std::size_t capacity = 16;
    while (capacity < 2 * keys_.size()) capacity <<= 1;
    slots_.assign(capacity, Slot{});
    mask_ = capacity - 1;
    for (std::size_t i = 0; i < keys_.size(); ++i) {
      std::size_t s = hashes_[i] & mask_;
      while (slots_[s].record != 0) s = (s + 1) & mask_;
      slots_[s] = Slot{static_cast<std::uint32_t>(i + 1), tag_of(hashes_[i])};
    }
  }

  std::vector<std::string_view, LargeAllocator<std::string_view>> keys_;
  std::vector<std::size_t, LargeAllocator<std::size_t>> hashes_;
  std::vector<Slot, LargeAllocator<Slot>> slots_;
  std::size_t mask_ = 0;
  std::optional<std::size_t> repeated_;
};

// Matches old and new items by key and reports removed, changed (field by field) and added ones.
// A side holding two items of one key (an edited or concatenated file) is refused, naming it.
class Matcher {
 public:
  Matcher(std::vector<Change>& changes, const DiffGate& gate, const RecordSet& old_set,
          const RecordSet& new_set)
      : changes_(changes), gate_(gate), old_source_(old_set.source), new_source_(new_set.source) {}

  /// The fields of two single objects (the container, a GraphSignature) that differ, `record`
  /// naming what diff compares by default.
  void fields(const Json& old_item, const Json& new_item, const char* record,
              const std::string& subject, const Json& path) {
    const std::unordered_set<std::string>& by_default = compared_by_default(record);
    const std::vector<const char*> environment = environment_fields(record);
    for (const auto& [field, old_value] : old_item.items()) {
      const bool of_environment =
          std::find(environment.begin(), environment.end(), field) != environment.end();
      if (!gate_.compares(field, of_environment || by_default.count(field) > 0)) continue;
      static const Json absent;
      const auto found = new_item.find(field);
      const Json& new_value = found == new_item.end() ? absent : *found;
      if (of_environment) {
        // what the numbers were measured on: reported, never setting the exit status
        if (!same_json(old_value, new_value))
          changes_.push_back({"environment", subject, path, field, old_value, new_value});
        continue;
      }
      change(field, old_value, new_value, subject, path);
    }
  }

  /// Pairs of items of one key: (old index, new index), in old order.
  using Pairs = std::vector<std::pair<std::size_t, std::size_t>,
                            LargeAllocator<std::pair<std::size_t, std::size_t>>>;

  /// `key_of(record, keys)` is a record's key text; `path_of(record)` its path as a change names
  /// it. Returns the pairs matched.
  template <typename KeyOf, typename PathOf>
  Pairs match(const RecordList& old_items, const RecordList& new_items, const char* record,
              const std::string& subject, KeyOf key_of, PathOf path_of,
              std::initializer_list<const char*> identity,
              std::initializer_list<const char*> within = {}) {
    KeyTexts texts;
    const SideKeys old_keys(old_items, key_of, texts);
    SideKeys new_keys(new_items, key_of, texts);
    // each side holds one record a key
    const auto refuse_repeated = [&](const SideKeys& side, const RecordList& items,
                                     const std::string& source) {
      if (const auto twice = side.repeated())
        throw Error(source + ": two " + subject + " records for " +
                    printable(dump_line(path_of(items[*twice])), 200) +
                    "; a record file holds one each (edited, or two files joined?)");
    };
    refuse_repeated(old_keys, old_items, old_source_);
    refuse_repeated(new_keys, new_items, new_source_);
    FieldChoice choice(gate_, record, identity, within);
    Pairs pairs;
    pairs.reserve(std::min(old_items.size(), new_items.size()));
    std::vector<bool> matched(new_items.size());
    std::size_t expected = 0;  // the new record after the one matched last
    for (std::size_t i = 0; i < old_items.size(); ++i) {
      const std::size_t j = new_keys.find(old_keys, i, expected);
      if (j == SideKeys::npos) {
        changes_.push_back(
            {"removed", subject, path_of(old_items[i]), Json(), old_items.to_json(i), Json()});
        continue;
      }
      matched[j] = true;
      expected = j + 1;
      pairs.emplace_back(i, j);
      fields(old_items[i], new_items[j], choice, subject, [&] { return path_of(old_items[i]); });
    }
    for (std::size_t j = 0; j < new_items.size(); ++j)
      if (!matched[j])
        changes_.push_back(
            {"added", subject, path_of(new_items[j]), Json(), Json(), new_items.to_json(j)});
    return pairs;
  }

 private:
  template <typename PathOf>
  void fields(RecordList::Record old_item, RecordList::Record new_item, FieldChoice& choice,
              const std::string& subject, PathOf path) {
    // a tensor's weights are said twice where both sides give data_crc32 (its elements) beside
    // storage_crc32 (its storage, which differs between formats): compared once, as
    // data_crc32; --ignore of either leaves them out (docs/cli.md, diff)
    const auto has_elements_crc = [](RecordList::Record item) {
      const FieldText* f = item.find(names().data_crc32, 0);
      return f && f->text() != "null";
    };
    const bool elements_crc = has_elements_crc(old_item) && has_elements_crc(new_item);
    std::size_t position = 0;
    for (const FieldText& old_field : old_item) {
      const std::size_t at = position++;
      if (!choice.compares(old_field.name)) continue;
      if (old_field.name == names().storage_crc32 && elements_crc) continue;
      if (old_field.name == names().data_crc32 && !gate_.compares("storage_crc32", true))
        continue;
      const FieldText* new_field = new_item.find(old_field.name, at);
      if (new_field && same_text(old_field, *new_field)) continue;  // the same text: the same value
      change(field_name_text(old_field.name), parse_text(old_field.text()),
             new_field ? parse_text(new_field->text()) : Json(), subject, path());
    }
  }

  void change(const std::string& field, const Json& old_value, const Json& new_value,
              const std::string& subject, const Json& path) {
    if (not_a_change(field, old_value, new_value) || same_json(old_value, new_value)) return;
    changes_.push_back({"changed", subject, path, field, old_value, new_value,
                        gate_.within(field, old_value, new_value)});
  }

  std::vector<Change>& changes_;
  const DiffGate& gate_;
  const std::string& old_source_;
  const std::string& new_source_;
};

// A record's key field as its canonical text; `path_of` the same field as a change names it.
auto key_field(FieldName name) {
  return [name](RecordList::Record r, KeyTexts& keys) { return keys.of(r.find(name)->text()); };
}
auto path_field(FieldName name) {
  return [name](RecordList::Record r) { return r.value(name); };
}

// A tensor's name as named_parameters() / named_buffers() spell it: `layer1.0.conv1.weight`
// (--strip-prefix's prefixes taken off).
std::string tensor_key(RecordList::Record tensor, const DiffGate& gate) {
  const std::string_view module_text = tensor.find(names().module_path)->text();
  const std::string_view name_text = tensor.find(names().name)->text();
  if (!json_string(module_text) || !json_string(name_text))
    throw Error("a TensorMetadata whose module_path or name is not a string");
  const std::string module = json_string_value(module_text);
  const std::string name = json_string_value(name_text);
  return gate.stripped(module == kRootPath ? name : module + "." + name);
}

// A module's path as its key: --strip-prefix's prefixes taken off (the root where a prefix is
// the whole path)
auto module_key(const DiffGate& gate) {
  return [&gate](RecordList::Record r, KeyTexts& keys) -> std::string_view {
    const FieldText* path = r.find(names().path);
    if (!gate.strips() || !json_string(path->text())) return keys.of(path->text());
    const std::string value = json_string_value(path->text());
    if (value == kRootPath) return keys.of(path->text());
    const std::string stripped = gate.stripped(value);
    return keys.keep(Json(stripped.empty() ? std::string(kRootPath) : stripped).dump());
  };
}
auto module_path_of(const DiffGate& gate) {
  return [&gate](RecordList::Record r) -> Json {
    Json path = r.value(names().path);
    if (!gate.strips() || !path.is_string() || path.get<std::string>() == kRootPath) return path;
    const std::string stripped = gate.stripped(path.get<std::string>());
    return stripped.empty() ? std::string(kRootPath) : stripped;
  };
}

// Attributes of the modules both sides hold (`pairs`), by `module.attribute` (`<root>.name` at
// the root).
void diff_attributes(const RecordSet& old_set, const RecordSet& new_set,
                     const Matcher::Pairs& pairs, std::vector<Change>& changes) {
  const FieldName attributes = names().attributes;
  for (const auto& [i, j] : pairs) {
    const auto old_module = old_set.items[i], new_module = new_set.items[j];
    const FieldText& old_text = *old_module.find(attributes);
    const FieldText& new_text = *new_module.find(attributes);
    if (same_text(old_text, new_text)) continue;
    const std::string module = old_module.value(names().path).get<std::string>();
    const Json before = parse_text(old_text.text());
    const Json after = parse_text(new_text.text());
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
  RecordSet set;
  set.source = path;
  share_store(set);
  // a UTF-8 byte-order mark (editors on Windows write one) is not part of the records
  const std::uint64_t start = file.starts_with("\xEF\xBB\xBF") ? 3 : 0;
  // jsonl when the first line is a whole record; else the indented `--format json` document
  RecordLines lines(file, start);
  if (!lines.next_line()) throw Error(path + ": holds no records");
  bool has_record = false;
  const JsonScan scan =
      scan_json_object(lines.line(), kMaxJsonDepth, [&](std::string_view key, auto) {
        has_record = has_record || json_string_value(key) == "record";
      });
  // a line nested too deep: read_jsonl says what is wrong with it
  if ((scan == JsonScan::object && has_record) || scan == JsonScan::too_deep)
    return read_jsonl(lines, std::move(set), path);
  const std::string text = file.read_all(kMaxRecordFileBytes, "a record file");
  return read_json_document(text.substr(static_cast<std::size_t>(start)), path);
}

namespace {

// The tensors of both sides by name; `across_formats`: a weights file against an archive, only
// what both tell (dtype, shape and the elements' CRC, and the counts that follow from them)
void diff_tensors(const RecordSet& old_set, const RecordSet& new_set, const DiffGate& gate,
                  Matcher& matcher, bool across_formats) {
  const auto key = [&gate](RecordList::Record t, KeyTexts& keys) {
    return keys.keep(tensor_key(t, gate));
  };
  const auto name = [&gate](RecordList::Record t) { return Json(tensor_key(t, gate)); };
  if (across_formats)
    matcher.match(*old_set.tensors, *new_set.tensors, "TensorMetadata", "tensor", key, name,
                  {"module_path", "name"}, {"dtype", "shape", "numel", "nbytes", "data_crc32"});
  else
    matcher.match(*old_set.tensors, *new_set.tensors, "TensorMetadata", "tensor", key, name,
                  {"module_path", "name"});
}

// `set` with the modules whose whole path is a --strip-prefix prefix (`module` of a
// DataParallel state dict) made the root: such a module is the model, so its fields replace the
// root's, and the counts of the tensors on either (the root of a DataParallel state dict holds
// none) add up, as they would on a model saved without the prefix.
RecordSet without_prefix_modules(const RecordSet& set, const DiffGate& gate) {
  static const FieldName kCounts[] = {field_name("direct_parameters"),
                                      field_name("trainable_parameters"),
                                      field_name("direct_buffers")};
  const auto is_count = [](FieldName name) {
    return std::find(std::begin(kCounts), std::end(kCounts), name) != std::end(kCounts);
  };
  std::optional<std::size_t> root;
  std::vector<std::size_t> prefixes;  // the modules that strip to the root
  for (std::size_t i = 0; i < set.items.size(); ++i) {
    const FieldText* path = set.items[i].find(names().path);
    if (!path || !json_string(path->text())) continue;
    const std::string value = json_string_value(path->text());
    if (value == kRootPath) root = i;
    else if (gate.stripped(value).empty()) prefixes.push_back(i);
  }
  RecordSet out = set;
  out.items = RecordList(set.items.shared_store());
  for (std::size_t i = 0; i < set.items.size(); ++i) {
    if (std::find(prefixes.begin(), prefixes.end(), i) != prefixes.end()) continue;
    if (i != root || prefixes.empty()) {
      for (const FieldText& field : set.items[i]) out.items.add_field(field.name, field.text());
      out.items.end_record();
      continue;
    }
    // the root: the prefix modules' fields over its own, the counts summed where numbers
    Json merged = set.items.to_json(i);
    for (const std::size_t p : prefixes) {
      for (const FieldText& field : set.items[p]) {
        if (field.name == names().path) continue;
        const std::string key(field_name_text(field.name));
        const Json value = parse_text(field.text());
        const auto now = merged.find(key);
        if (is_count(field.name) && now != merged.end() && now->is_number_integer() &&
            value.is_number_integer())
          *now = now->get<std::int64_t>() + value.get<std::int64_t>();
        else if (!is_count(field.name) || now == merged.end() || now->is_null())
          merged[key] = value;
      }
    }
    out.items.add_object(merged);
  }
  return out;
}

}  // namespace

RecordDiff diff_records(const RecordSet& old_given, const RecordSet& new_given,
                        const DiffGate& gate) {
  std::optional<RecordSet> old_stripped, new_stripped;
  if (gate.strips() && old_given.kind == RecordSet::Kind::model &&
      new_given.kind == RecordSet::Kind::model) {
    old_stripped = without_prefix_modules(old_given, gate);
    new_stripped = without_prefix_modules(new_given, gate);
  }
  const RecordSet& old_set = old_stripped ? *old_stripped : old_given;
  const RecordSet& new_set = new_stripped ? *new_stripped : new_given;
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
    matcher.match(old_set.items, new_set.items, "ModuleProfile", "module",
                  key_field(names().module_path), path_field(names().module_path),
                  {"module_path"});
    matcher.match(old_set.operators, new_set.operators, "OperatorProfile", "operator",
                  key_field(names().operator_), path_field(names().operator_), {"operator"});
    return diff;
  }
  const bool model = old_set.kind == RecordSet::Kind::model;
  diff.compared = model ? std::vector<std::string>{"model", "modules"}
                        : std::vector<std::string>{"config", "fields"};

  if (model && old_set.weights_file != new_set.weights_file) {
    // a weights file against an archive (or their records): the weights file counts every tensor
    // as a parameter and names no module without tensors, so only the tensors are compared,
    // each by what both formats tell (contract 11.2)
    diff.compared.clear();
    if (old_set.tensors && new_set.tensors) {
      diff.compared.push_back("tensors");
      diff_tensors(old_set, new_set, gate, matcher, true);
    }
    return diff;
  }
  // the container's fields both sides hold (byte totals only with --tensors on both)
  Json old_header = Json::object();
  for (const auto& [field, value] : old_set.header.items())
    if (new_set.header.contains(field)) old_header[field] = value;
  matcher.fields(old_header, new_set.header, model ? "ModelMetadata" : "ModelStructureSpec",
                 to_string(old_set.kind), Json());

  const Matcher::Pairs modules =
      model ? matcher.match(old_set.items, new_set.items, "ModuleMetadata", "module",
                            module_key(gate), module_path_of(gate), {"path", "attributes"})
            : matcher.match(old_set.items, new_set.items, "ConfigFieldSpec", "field",
                            key_field(names().path), path_field(names().path),
                            {"path", "attributes"});
  if (!model) {
    if (old_set.unwalked && new_set.unwalked && gate.compares("value", true))
      diff_unwalked(old_set, new_set, changes);
    return diff;
  }
  if (old_set.has_attributes && new_set.has_attributes && gate.compares("attributes", true)) {
    diff.compared.push_back("attributes");
    diff_attributes(old_set, new_set, modules, changes);
  }
  if (old_set.tensors && new_set.tensors) {
    diff.compared.push_back("tensors");
    diff_tensors(old_set, new_set, gate, matcher, false);
  }
  // a TorchScript method and an exported program's forward are not alike (contract 10.3)
  if (old_set.methods && new_set.methods && old_set.torch_export == new_set.torch_export) {
    diff.compared.push_back("signatures");
    matcher.match(*old_set.methods, *new_set.methods, "MethodSignature", "signature",
                  key_field(names().name), path_field(names().name), {"name"});
  }
  if (old_set.graph_signature && new_set.graph_signature) {
    diff.compared.push_back("graph_signature");
    matcher.fields(*old_set.graph_signature, *new_set.graph_signature, "GraphSignature",
                   "graph_signature", Json());
  }
  if (old_set.operator_counts && new_set.operator_counts) {
    diff.compared.push_back("operators");
    const FieldName module_path = names().module_path, op = names().operator_;
    const auto key = [=](RecordList::Record c, KeyTexts& keys) {
      return keys.keep(dump_line(c.value(module_path)) + " " + dump_line(c.value(op)));
    };
    const auto path = [=](RecordList::Record c) {
      return Json::array({c.value(module_path), c.value(op)});
    };
    matcher.match(*old_set.operator_counts, *new_set.operator_counts, "OperatorCount", "operator",
                  key, path, {"module_path", "operator"});
  }
  return diff;
}

}  // namespace vin::diagnostics
