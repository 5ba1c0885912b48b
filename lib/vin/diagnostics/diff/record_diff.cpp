#include "vin/diagnostics/diff/record_diff.h"

#include <algorithm>
#include <map>
#include <optional>

#include "vin/diagnostics/diff/record_matching.h"
#include "vin/diagnostics/diff/record_set_parts.h"
#include "vin/diagnostics/json/bounded_json.h"
#include "vin/diagnostics/records/error.h"

namespace vin::diagnostics {
namespace {

using namespace diff_detail;

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
