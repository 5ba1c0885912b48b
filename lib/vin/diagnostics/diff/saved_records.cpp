#include "vin/diagnostics/diff/saved_records.h"

#include <algorithm>
#include <cstring>

#include "vin/diagnostics/diff/record_set_parts.h"
#include "vin/diagnostics/json/bounded_json.h"
#include "vin/diagnostics/json/json_encoding.h"
#include "vin/diagnostics/json/model_document.h"
#include "vin/diagnostics/json/record_fields.h"
#include "vin/diagnostics/records/error.h"
#include "vin/diagnostics/text/printable.h"

namespace vin::diagnostics {
namespace {

using namespace diff_detail;

// The largest record file read: far more than any a command writes of a real model
constexpr std::uint64_t kMaxRecordFileBytes = std::uint64_t{1} << 30;

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
  // the record names of the model document's parts (json/model_document.h)
  const auto is = [](const std::string& record, ModelPart part) {
    return record == model_part(part).record;
  };
  do {
    const std::string& record = lines.record();
    const auto where = [&lines] { return lines.where(); };
    if (!header && is(record, ModelPart::export_archive) && !export_archive) {
      export_archive = true;  // a .pt2's records: the container first
      continue;
    }
    if (!header && is(record, ModelPart::weights_file) && !weights_file) {
      weights_file = true;  // a weights file's records: the container first
      continue;
    }
    // a checkpoint's values: after its model (before it in what earlier versions wrote)
    if (is(record, ModelPart::checkpoint_values) && weights_file) continue;
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
    } else if (is(record, ModelPart::methods)) {
      if (modules_begun) throw misplaced("ModuleMetadata");
      RecordList& methods = emplace_list(set.methods, set);
      lines.add_to(methods);
      require_keys(methods[methods.size() - 1], kMethodRequired, where);
    } else if (is(record, ModelPart::graph_signature)) {
      if (modules_begun || set.graph_signature) throw misplaced("ModuleMetadata");
      Json j = lines.object();
      require_keys(j, kGraphSignatureKeys, "GraphSignature", where());
      set.graph_signature = std::move(j);
    } else if (is(record, ModelPart::operators)) {
      RecordList& counts = emplace_list(set.operator_counts, set);
      lines.add_to(counts);
      require_keys(counts[counts.size() - 1], kOperatorCountRequired, where);
    } else if (is(record, ModelPart::modules)) {
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
    } else if (is(record, ModelPart::checkpoint_tensors) && weights_file && modules_begun &&
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

}  // namespace vin::diagnostics
