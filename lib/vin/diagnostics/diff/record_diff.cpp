#include "vin/diagnostics/diff/record_diff.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <unordered_map>

#include "vin/diagnostics/records/error.h"
#include "vin/diagnostics/text/printable.h"

namespace vin::diagnostics {
namespace {

Json without_record(const Json& j) {
  Json out;
  for (const auto& [key, value] : j.items())
    if (key != "record") out[key] = value;
  return out;
}

// Items are matched by path: a module path string, or a field path array (as its JSON text).
std::string item_key(const Json& item) { return dump_line(item.at("path")); }

// Two field values are equal when they print the same (so 1 and 1.0 differ, NaN equals NaN).
bool same(const Json& a, const Json& b) { return dump_line(a) == dump_line(b); }

void require_keys(const Json& j, const std::vector<const char*>& keys, const std::string& where) {
  for (const char* key : keys)
    if (!j.contains(key))
      throw Error(where + ": a " + j.value("record", "record") + " without '" + key + "'");
}

}  // namespace

RecordSet record_set(const ModelMetadata& model, const std::string& source) {
  RecordSet set{RecordSet::Kind::model, source, to_json(model), {}};
  set.items = set.header["modules"].get<std::vector<Json>>();
  set.header.erase("modules");
  return set;
}

RecordSet record_set(const ModelStructureSpec& spec, const std::string& source) {
  RecordSet set{RecordSet::Kind::config, source, to_json(spec), {}};
  set.items = set.header["fields"].get<std::vector<Json>>();
  set.header.erase("fields");
  return set;
}

namespace {

constexpr int kMaxJsonDepth = 64;
constexpr std::uint64_t kMaxRecordFileBytes = std::uint64_t{1} << 30;

struct NestedTooDeep {};

}  // namespace

bool looks_like_record_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  char c = 0;
  while (in.get(c))
    if (!std::isspace(static_cast<unsigned char>(c))) return c == '{';
  return false;
}

RecordSet read_record_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in) throw Error(path + ": cannot open: " + std::strerror(errno));
  if (static_cast<std::uint64_t>(in.tellg()) > kMaxRecordFileBytes)
    throw Error(path + ": larger than " + std::to_string(kMaxRecordFileBytes >> 30) +
                " GiB, more than any record file this tool writes");
  in.seekg(0);
  RecordSet set;
  set.source = path;
  std::string line;
  std::size_t number = 0;
  bool have_header = false;
  while (std::getline(in, line)) {
    ++number;
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    const std::string where = path + ":" + std::to_string(number);
    Json j;
    try {
      // records nest a few levels; refusing deep values while parsing keeps nlohmann's
      // recursive copy and comparison from overflowing the stack on a hostile line
      j = Json::parse(line, [](int depth, Json::parse_event_t, Json&) {
        if (depth > kMaxJsonDepth) throw NestedTooDeep();
        return true;
      });
    } catch (const NestedTooDeep&) {
      throw Error(where + ": a JSON value nested more than " + std::to_string(kMaxJsonDepth) +
                  " levels deep, which no record has");
    } catch (const std::exception&) {
      throw Error(where +
                  ": not a JSON line (diff reads the jsonl that inspect-model or "
                  "inspect-config writes)");
    }
    if (!j.is_object() || !j.contains("record") || !j["record"].is_string())
      throw Error(where + ": a line without a \"record\" key");
    const std::string record = j["record"];
    if (!have_header) {
      if (record == "ModelMetadata") {
        set.kind = RecordSet::Kind::model;
        require_keys(j, {"model_type", "total_parameters", "trainable_parameters"}, where);
      } else if (record == "ModelStructureSpec") {
        set.kind = RecordSet::Kind::config;
        require_keys(j, {"config_type", "target_type"}, where);
      } else {
        throw Error(where + ": starts with a " + printable(record, 80) +
                    " record; expected ModelMetadata (inspect-model) or ModelStructureSpec "
                    "(inspect-config)");
      }
      set.header = without_record(j);
      have_header = true;
      continue;
    }
    const char* expected =
        set.kind == RecordSet::Kind::model ? "ModuleMetadata" : "ConfigFieldSpec";
    if (record != expected)
      throw Error(where + ": a " + printable(record, 80) + " record among " + expected +
                  " records");
    if (set.kind == RecordSet::Kind::model)
      require_keys(j,
                   {"path", "module_type", "direct_parameters", "trainable_parameters",
                    "direct_buffers", "training"},
                   where);
    else
      require_keys(j, {"path", "declared_type", "configured_type", "value"}, where);
    set.items.push_back(without_record(j));
  }
  if (!have_header) throw Error(path + ": holds no records");
  return set;
}

std::vector<Change> diff_records(const RecordSet& old_set, const RecordSet& new_set,
                                 const std::vector<std::string>& ignore) {
  if (old_set.kind != new_set.kind)
    throw UsageError("cannot compare " + std::string(to_string(old_set.kind)) + " records (" +
                     old_set.source + ") with " + to_string(new_set.kind) + " records (" +
                     new_set.source + ")");
  const auto ignored = [&](const std::string& field) {
    return std::find(ignore.begin(), ignore.end(), field) != ignore.end();
  };
  const bool model = old_set.kind == RecordSet::Kind::model;
  const std::string item_subject = model ? "module" : "field";
  std::vector<Change> changes;

  for (const auto& [field, old_value] : old_set.header.items()) {
    if (ignored(field)) continue;
    const Json new_value = new_set.header.value(field, Json());
    if (!same(old_value, new_value))
      changes.push_back({"changed", to_string(old_set.kind), Json(), field, old_value, new_value});
  }

  std::unordered_map<std::string, const Json*> new_items, old_items;
  for (const auto& item : new_set.items) new_items.emplace(item_key(item), &item);
  for (const auto& item : old_set.items) old_items.emplace(item_key(item), &item);
  for (const auto& item : old_set.items) {
    const auto it = new_items.find(item_key(item));
    if (it == new_items.end()) {
      changes.push_back({"removed", item_subject, item["path"], Json(), item, Json()});
      continue;
    }
    for (const auto& [field, old_value] : item.items()) {
      if (field == "path" || ignored(field)) continue;
      const Json new_value = it->second->value(field, Json());
      if (!same(old_value, new_value))
        changes.push_back({"changed", item_subject, item["path"], field, old_value, new_value});
    }
  }
  for (const auto& item : new_set.items)
    if (!old_items.count(item_key(item)))
      changes.push_back({"added", item_subject, item["path"], Json(), Json(), item});
  return changes;
}

}  // namespace vin::diagnostics
