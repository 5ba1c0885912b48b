// What diff's readers of record sets and its matcher share (diff_detail: not for other
// folders): the fields each record read back must have, the names looked up in every record,
// which fields are compared by default, and the lists of a RecordSet.
#pragma once

#include <algorithm>
#include <initializer_list>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "vin/diagnostics/json/diff_records.h"
#include "vin/diagnostics/json/record_list.h"
#include "vin/diagnostics/records/error.h"
#include "vin/diagnostics/records/record_value.h"

namespace vin::diagnostics::diff_detail {

/// The deepest JSON a record file may nest (records nest far less).
inline constexpr int kMaxJsonDepth = 64;

/// The fields each record read back must have; a profile's are also the ones diff compares
/// (what does not depend on the machine: record_fields.cpp).
extern const std::vector<const char*> kModelKeys, kModuleKeys, kTensorKeys, kMethodKeys,
    kGraphSignatureKeys, kOperatorCountKeys, kSpecKeys, kFieldKeys, kModuleProfileKeys,
    kOperatorProfileKeys, kProfileSummaryKeys;

/// The names diff looks up in every record, numbered once.
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
const Names& names();

/// The fields of `record` (a name of the field tables) diff compares when no option names them.
const std::unordered_set<std::string>& compared_by_default(const char* record);

/// JSON text parsed within kMaxJsonDepth.
Json parse_bounded(const std::string& text);
Json parse_text(std::string_view text);

/// Whether two fields hold the same text (so the same value).
bool same_text(const FieldText& a, const FieldText& b);

/// The root's path as a record's JSON text holds it (a checkpoint's tensors outside its state
/// dict are on the root).
inline constexpr std::string_view kRootPathText = "\"<root>\"";

/// Whether a value's JSON text is a string.
inline bool json_string(std::string_view text) { return !text.empty() && text.front() == '"'; }

/// Whether `name` is one of `names`.
bool one_of(const std::string& name, std::initializer_list<const char*> names);
/// `j` without the members named in `keys`.
Json without(const Json& j, const std::vector<const char*>& keys);

/// What a model's `--format json` document holds beside ModelMetadata's own fields.
extern const std::vector<const char*> kModelDocumentParts;

/// Throws Error (naming `where`) unless `j` is an object with every key of `keys`.
void require_keys(const Json& j, const std::vector<const char*>& keys, const char* record,
                  const std::string& where);

/// The fields a record of a list must have, by name and number (looked up a million times).
struct Required {
  Required(const char* record_, const std::vector<const char*>& keys_)
      : record(record_), keys(keys_) {
    for (const char* key : keys) names.push_back(field_name(key));
  }
  const char* record;
  std::vector<const char*> keys;
  std::vector<FieldName> names;
};
extern const Required kModuleRequired, kTensorRequired, kMethodRequired, kOperatorCountRequired,
    kFieldRequired, kModuleProfileRequired, kOperatorProfileRequired;

/// The same for a record of a list (always an object); `where` says where it was read.
template <class Where>
void require_keys(RecordList::Record r, const Required& required, Where where) {
  for (std::size_t k = 0; k < required.names.size(); ++k)
    if (!r.has(required.names[k]))
      throw Error(where() + ": a " + required.record + " without '" + required.keys[k] + "'");
}

/// Whether a field's two values differ only in what one side's format cannot know.
bool not_a_change(const std::string& field, const Json& a, const Json& b);

/// document[key], or an empty list where the document has none.
const Json& list_at(const Json& document, const char* key);
/// Where a set's lists keep their texts: one store for all of them.
void share_store(RecordSet& set);
RecordList& emplace_list(std::optional<RecordList>& list, const RecordSet& set);

/// A module's tensors (a `--format json` document's, or a jsonl module line's own `tensors`) as
/// TensorMetadata items with the module's path first.
void add_tensors(RecordSet& set, const Json& tensors, std::string_view module_path_text,
                 const std::string& where);

}  // namespace vin::diagnostics::diff_detail
