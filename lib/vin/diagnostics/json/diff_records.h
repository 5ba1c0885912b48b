// The records of `vin-inspect diff`: the two sides as record sets, and the changes between them.
// The records' JSON form, so that records from an archive, a rendering or a saved jsonl or json
// file compare alike: the container (one object) parsed, the lists of records as the text of
// each field (record_list: a million of them read without a DOM); computed by record_diff,
// written by output_format.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "vin/diagnostics/json/json_encoding.h"
#include "vin/diagnostics/json/record_list.h"

namespace vin::diagnostics {

/// One side of a diff: the container record's fields, its items, and the details the side holds.
struct RecordSet {
  enum class Kind { model, config, profile };
  Kind kind = Kind::model;
  std::string source;  ///< the file it came from, for messages
  /// ModelMetadata / ModelStructureSpec fields, without "record"; a profile's ProfileSummary
  /// fields (without "modules" and "operators", which count the lists)
  Json header;
  /// ModuleMetadata (with `attributes` where held, without `tensors`) / ConfigFieldSpec
  /// objects, without "record"; a profile's ModuleProfile objects
  RecordList items;
  /// profile: the OperatorProfile objects
  RecordList operators;
  /// model: TensorMetadata objects with their `module_path` first, when the side holds them
  /// (--tensors)
  std::optional<RecordList> tensors;
  /// model: MethodSignature objects, when the side holds them (--signature)
  std::optional<RecordList> methods;
  /// model: whether the ModuleMetadata items hold `attributes` (--attributes; never a
  /// torch.export archive's, which records none)
  bool has_attributes = false;
  /// model: whether the side is a torch.export archive or its records (an ExportArchive first)
  bool torch_export = false;
  /// model: whether the side is a weights file or its records (a WeightsFile first), whose
  /// counts cannot tell parameters from buffers
  bool weights_file = false;
  /// model: a torch.export program's GraphSignature (inputs, outputs), when the side holds it
  std::optional<Json> graph_signature;
  /// model: a torch.export program's OperatorCount objects, when the side holds them
  std::optional<RecordList> operator_counts;
  /// config: the contents of each field that inspect-config records without walking (a mapping
  /// that is not a model, a sequence), by the field's path; when the side holds them (a YAML
  /// rendering or an archive's config.yaml, not saved records)
  std::optional<std::vector<std::pair<std::vector<std::string>, Json>>> unwalked;
};

/// One difference.
struct Change {
  /// "added", "removed", "changed"; "environment": a profile's environment differs (its
  /// threads, device, mode, inputs, LibTorch), which explains numbers rather than being one
  std::string kind;
  /// "model", "config", "profile" (the container's fields), "module", "field", "tensor",
  /// "attribute", "signature", "graph_signature", "operator"
  std::string subject;
  Json path;       ///< module path, field path (array), tensor name, `module.attribute`, method
                   ///< name; null for the container
  Json field;      ///< the changed field's name; null for added/removed items and attributes
  Json old_value;  ///< null for added items; the whole item for removed ones
  Json new_value;  ///< null for removed items; the whole item for added ones
  /// for a field with a `--tolerance`: whether the change lies within it (then it does not make
  /// the exit status 1); none for other changes
  std::optional<bool> within_tolerance;

  Change() = default;
  Change(std::string kind_, std::string subject_, Json path_, Json field_, Json old_value_,
         Json new_value_, std::optional<bool> within_tolerance_ = std::nullopt)
      : kind(std::move(kind_)),
        subject(std::move(subject_)),
        path(std::move(path_)),
        field(std::move(field_)),
        old_value(std::move(old_value_)),
        new_value(std::move(new_value_)),
        within_tolerance(within_tolerance_) {}
  /// whether it sets diff's exit status 1: every change but one within its tolerance and an
  /// environment change
  bool counts() const { return kind != "environment" && !within_tolerance.value_or(false); }
};

/// The last record of a diff: what was compared, and how many changes of each kind.
struct DiffSummary {
  std::string kind;  ///< "model", "config" or "profile"
  std::string old_source;
  std::string new_source;
  std::int64_t added = 0;
  std::int64_t removed = 0;
  std::int64_t changed = 0;
  std::int64_t within_tolerance = 0;  ///< the changes within their --tolerance
  std::int64_t environment = 0;       ///< the environment changes (not in added/removed/changed)
  bool identical = true;
  std::vector<std::string> compared;  ///< the kinds of records compared
};

/// The summary of `changes` between `old_set` and `new_set`, which compared `compared`.
DiffSummary summarize(const RecordSet& old_set, const RecordSet& new_set,
                      const std::vector<Change>& changes, const std::vector<std::string>& compared);

/// "model", "config" or "profile".
const char* to_string(RecordSet::Kind kind);

/// Change and DiffSummary as JSON objects, without the "record" key (record_fields.cpp).
Json to_json(const Change& change);
Json to_json(const DiffSummary& summary);

}  // namespace vin::diagnostics
