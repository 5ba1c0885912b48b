// Records held as the JSON text of their fields (diff at scale): a million saved records are a
// few flat arrays of (field name, value text) over the bytes they were read from, compared by
// text and parsed only where two differ or a value is printed. A field's text is its value's JSON
// as written (a saved line's own bytes) or as dump_line writes it (records in memory); two equal
// texts are always the same value (same_json), two different ones are compared as parsed values.
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "vin/diagnostics/platform/large_memory.h"
#include "vin/diagnostics/records/record_value.h"

namespace vin::diagnostics {

/// A field name as a number: the same name has the same number in every list of the process
/// (names are interned once and kept).
using FieldName = std::uint32_t;
/// The number of `name`, interned on first use (thread-safe).
FieldName field_name(std::string_view name);
/// The name numbered `name`.
const std::string& field_name_text(FieldName name);

/// Names as a reader meets them record after record: the k-th key of a record is looked up by
/// comparing it with the k-th key of the record before (records of one kind repeat their keys
/// in order), and interned only when it differs.
class FieldNameCache {
 public:
  /// The number of the key whose JSON string (quotes and escapes as written) is `quoted`, met
  /// as the `position`-th key of its record.
  FieldName find(std::string_view quoted, std::size_t position);

 private:
  struct Seen {
    std::string quoted;
    FieldName name = 0;
  };
  std::vector<Seen> by_position_;
};

/// Bytes the field texts of record lists point into: whole buffers adopted as they are (a record
/// file read once) and texts copied in (values dumped from records in memory). Nothing moves
/// once kept.
class TextStore {
 public:
  /// Keeps `bytes` (a file's) and returns a view of them.
  std::string_view adopt(std::unique_ptr<LargeBuffer> bytes);
  /// Copies `text` in.
  std::string_view keep(std::string_view text);

 private:
  std::vector<std::unique_ptr<LargeBuffer>> buffers_;  // adopted, and the blocks texts are kept in
  std::size_t block_used_ = 0;  // of the last buffer, a block
  std::size_t block_size_ = 0;
};

/// One field of a record: its name and the JSON text of its value.
struct FieldText {
  FieldName name;
  std::uint32_t size;
  const char* data;
  std::string_view text() const { return {data, size}; }
};

/// Records of one kind, each its fields in order. Texts are views into a TextStore that the list
/// shares (`store()`), so lists are copied and moved freely.
class RecordList {
 public:
  /// A record: its fields, in order.
  class Record {
   public:
    Record(const FieldText* begin, const FieldText* end) : begin_(begin), end_(end) {}
    const FieldText* begin() const { return begin_; }
    const FieldText* end() const { return end_; }
    std::size_t size() const { return static_cast<std::size_t>(end_ - begin_); }
    /// The field `name`, or nullptr. `hint` is where it is looked for first (its position in a
    /// record like this one).
    const FieldText* find(FieldName name, std::size_t hint = 0) const;
    bool has(FieldName name) const { return find(name) != nullptr; }
    /// The value of field `name` (which the record has) as parsed JSON.
    Json value(FieldName name) const;

   private:
    const FieldText* begin_;
    const FieldText* end_;
  };

  RecordList();
  explicit RecordList(std::shared_ptr<TextStore> store);

  std::size_t size() const { return starts_.size() - 1; }
  bool empty() const { return size() == 0; }
  Record operator[](std::size_t i) const {
    return {fields_.data() + starts_[i], fields_.data() + starts_[i + 1]};
  }
  /// The record `i` as a JSON object, its values parsed (for printing: an added or removed
  /// record).
  Json to_json(std::size_t i) const;
  /// Every field name the records have, each once, in the order first met.
  std::vector<FieldName> names() const;

  /// Adds a field to the record being built: `text` is JSON that the list's store holds (or
  /// outlives the list); a name the record has already keeps its place and takes the new value,
  /// as a repeated key does in a parsed object. Throws Error for a text of 4 GiB or more.
  void add_field(FieldName name, std::string_view text);
  /// The same, `text` copied into the store; where the record before has the same text in the
  /// same place (a million modules of a few types), its copy is shared instead.
  void add_field_copied(FieldName name, std::string_view text);
  /// Ends the record being built (with the fields added since the last end).
  void end_record();
  /// Adds `object`'s members but those named in `leave_out` as one record, each value dumped
  /// into the store as dump_line writes it.
  void add_object(const Json& object, std::initializer_list<const char*> leave_out = {});
  TextStore& store() { return *store_; }
  const std::shared_ptr<TextStore>& shared_store() const { return store_; }
  void reserve(std::size_t records, std::size_t fields);

 private:
  std::shared_ptr<TextStore> store_;
  std::vector<FieldText, LargeAllocator<FieldText>> fields_;
  // record i: fields_[starts_[i], starts_[i + 1])
  std::vector<std::size_t, LargeAllocator<std::size_t>> starts_;
  // for each name, the record (+1) that last had it and where: a repeated key found at once
  std::vector<std::pair<std::size_t, std::size_t>> last_seen_;
};

}  // namespace vin::diagnostics
