// How diff matches two sides' records (diff_detail: not for other folders): each record by its
// key (a module's path, a tensor's name, an operator), found where it is expected or through an
// index made the first time it is not, and the fields of matched records compared as the gate
// says (removed, changed and added records as Changes).
#pragma once

#include <deque>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_set>
#include <utility>
#include <vector>

#include "vin/diagnostics/diff/diff_gate.h"
#include "vin/diagnostics/diff/record_set_parts.h"
#include "vin/diagnostics/json/json_encoding.h"
#include "vin/diagnostics/platform/large_memory.h"
#include "vin/diagnostics/json/record_fields.h"
#include "vin/diagnostics/json/bounded_json.h"
#include "vin/diagnostics/text/printable.h"

namespace vin::diagnostics::diff_detail {

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
inline auto key_field(FieldName name) {
  return [name](RecordList::Record r, KeyTexts& keys) { return keys.of(r.find(name)->text()); };
}
inline auto path_field(FieldName name) {
  return [name](RecordList::Record r) { return r.value(name); };
}

// A tensor's name as named_parameters() / named_buffers() spell it: `layer1.0.conv1.weight`
// (--strip-prefix's prefixes taken off).
std::string tensor_key(RecordList::Record tensor, const DiffGate& gate);

// A module's path as its key: --strip-prefix's prefixes taken off (the root where a prefix is
// the whole path)
inline auto module_key(const DiffGate& gate) {
  return [&gate](RecordList::Record r, KeyTexts& keys) -> std::string_view {
    const FieldText* path = r.find(names().path);
    if (!gate.strips() || !json_string(path->text())) return keys.of(path->text());
    const std::string value = json_string_value(path->text());
    if (value == kRootPath) return keys.of(path->text());
    const std::string stripped = gate.stripped(value);
    return keys.keep(Json(stripped.empty() ? std::string(kRootPath) : stripped).dump());
  };
}
inline auto module_path_of(const DiffGate& gate) {
  return [&gate](RecordList::Record r) -> Json {
    Json path = r.value(names().path);
    if (!gate.strips() || !path.is_string() || path.get<std::string>() == kRootPath) return path;
    const std::string stripped = gate.stripped(path.get<std::string>());
    return stripped.empty() ? std::string(kRootPath) : stripped;
  };
}

}  // namespace vin::diagnostics::diff_detail
