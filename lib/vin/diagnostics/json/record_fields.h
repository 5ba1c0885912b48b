// Every record's fields, declared once (docs/records.md): for each record, its JSON keys in the
// order they are printed, how each is read off the record's struct, whether every record of the
// kind has it (or only with a detail option, such as `--tensors`) and whether diff compares it.
// The JSON encoding (json_encoding.cpp), diff's key lists (which fields a record must have to be
// read back, which ones it compares, which ones --ignore may name) and the test that holds
// docs/records.md to the code all come from these tables.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "vin/diagnostics/records/capture_records.h"
#include "vin/diagnostics/records/compare_records.h"
#include "vin/diagnostics/records/config_records.h"
#include "vin/diagnostics/json/diff_records.h"
#include "vin/diagnostics/records/model_metadata.h"
#include "vin/diagnostics/records/profile_records.h"
#include "vin/diagnostics/records/record_value.h"

namespace vin::diagnostics {

/// Whether a field is in every record of its kind.
enum class Presence {
  always,
  /// only in some records: with a detail option (--tensors, --stats, --save, ...), or where it
  /// holds something (CaptureSummary's seed when not 0, ProfileSummary's flops_overflowed)
  with_detail,
};

/// One field of record R: its JSON key, how its value is read off an R (a discarded Json value
/// when this record leaves the field out), and what diff does with it.
template <class R>
struct Field {
  const char* name;
  Json (*value)(const R&);
  Presence presence = Presence::always;
  /// diff compares it (the fields that do not depend on the machine or the run)
  bool compared = true;
  /// what a profile ran on and with (its threads, device, versions, inputs), not `compared`:
  /// diff reports a difference as an `environment` change, which does not set exit status 1
  bool environment = false;
};

/// What a field is, without its getter: what the key lists and the docs test read.
struct FieldInfo {
  const char* name;
  Presence presence;
  bool compared;
  bool environment = false;
};

/// A record's name as `jsonl` lines carry it ("ModuleMetadata") and its fields in order.
struct RecordInfo {
  const char* record;
  std::vector<FieldInfo> fields;
};

/// Every record the commands print, each with its fields (the order of docs/records.md).
const std::vector<RecordInfo>& record_infos();

/// The fields of `record` (a name of record_infos()); throws std::logic_error for another name.
const RecordInfo& record_info(std::string_view record);

/// The fields a `record` read back must have: those in every record of the kind that diff
/// compares.
std::vector<const char*> required_fields(std::string_view record);

/// The fields diff compares of `record`, present or not.
std::vector<const char*> compared_fields(std::string_view record);

/// The fields of `record` whose differences diff reports as `environment` changes.
std::vector<const char*> environment_fields(std::string_view record);

/// The JSON object of `record`: each field of `fields` in order, leaving out those the record
/// does not have.
template <class R, std::size_t N>
Json encode_fields(const Field<R> (&fields)[N], const R& record) {
  Json j = Json::object();
  for (const Field<R>& field : fields) {
    Json value = field.value(record);
    if (!value.is_discarded()) j[field.name] = std::move(value);
  }
  return j;
}

/// The value of a field this record leaves out.
inline Json absent_field() { return Json(Json::value_t::discarded); }

}  // namespace vin::diagnostics
