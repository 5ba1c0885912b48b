#include "vin/diagnostics/json/record_list.h"

#include <algorithm>
#include <cstring>
#include <deque>
#include <mutex>
#include <unordered_map>

#include "vin/diagnostics/json/bounded_json.h"
#include "vin/diagnostics/records/error.h"
#include "vin/diagnostics/json/json_encoding.h"

namespace vin::diagnostics {
namespace {

// Deep enough for any value a record holds; what reads the file bounds it first.
constexpr std::size_t kMaxValueDepth = 64;

struct FieldNames {
  std::mutex mutex;
  std::deque<std::string> names;  // a deque: a name's address never changes
  std::unordered_map<std::string_view, FieldName> numbers;
};

FieldNames& field_names() {
  static FieldNames* names = new FieldNames();  // never destroyed: used until the process ends
  return *names;
}

}  // namespace

FieldName field_name(std::string_view name) {
  FieldNames& table = field_names();
  const std::lock_guard<std::mutex> lock(table.mutex);
  const auto found = table.numbers.find(name);
  if (found != table.numbers.end()) return found->second;
  const auto number = static_cast<FieldName>(table.names.size());
  table.names.emplace_back(name);
  table.numbers.emplace(table.names.back(), number);
  return number;
}

const std::string& field_name_text(FieldName name) {
  FieldNames& table = field_names();
  const std::lock_guard<std::mutex> lock(table.mutex);
  return table.names.at(name);
}

FieldName FieldNameCache::find(std::string_view quoted, std::size_t position) {
  if (position < by_position_.size() && by_position_[position].quoted == quoted)
    return by_position_[position].name;
  const FieldName name = field_name(json_string_value(quoted));
  if (position < 64) {  // records have a few keys; a line of thousands is not remembered
    if (by_position_.size() <= position) by_position_.resize(position + 1);
    by_position_[position] = {std::string(quoted), name};
  }
  return name;
}

std::string_view TextStore::adopt(std::unique_ptr<LargeBuffer> bytes) {
  // kept before the block being filled, which stays the last
  const std::size_t at = block_size_ > 0 ? buffers_.size() - 1 : buffers_.size();
  buffers_.insert(buffers_.begin() + static_cast<std::ptrdiff_t>(at), std::move(bytes));
  return {buffers_[at]->data(), buffers_[at]->size()};
}

std::string_view TextStore::keep(std::string_view text) {
  constexpr std::size_t kBlockBytes = std::size_t{4} << 20;
  if (text.size() > kBlockBytes / 4) {
    auto copy = std::make_unique<LargeBuffer>(text.size());
    std::memcpy(copy->data(), text.data(), text.size());
    copy->set_size(text.size());
    return adopt(std::move(copy));
  }
  if (block_size_ - block_used_ < text.size()) {
    // blocks from 64 KiB, doubling to 4 MiB: a small file's records take little
    const std::size_t size = std::max(text.size(), std::clamp<std::size_t>(
                                                       2 * block_size_, 64 << 10, kBlockBytes));
    buffers_.push_back(std::make_unique<LargeBuffer>(size));
    block_used_ = 0;
    block_size_ = size;
  }
  char* at = buffers_.back()->data() + block_used_;
  std::memcpy(at, text.data(), text.size());
  block_used_ += text.size();
  return {at, text.size()};
}

const FieldText* RecordList::Record::find(FieldName name, std::size_t hint) const {
  if (hint < size() && begin_[hint].name == name) return begin_ + hint;
  for (const FieldText* f = begin_; f != end_; ++f)
    if (f->name == name) return f;
  return nullptr;
}

Json RecordList::Record::value(FieldName name) const {
  return parse_bounded_json(std::string(find(name)->text()), kMaxValueDepth);
}

RecordList::RecordList() : RecordList(std::make_shared<TextStore>()) {}

RecordList::RecordList(std::shared_ptr<TextStore> store) : store_(std::move(store)) {
  starts_.push_back(0);
}

Json RecordList::to_json(std::size_t i) const {
  JsonObjectBuilder object;
  for (const FieldText& field : (*this)[i])
    object.set(field_name_text(field.name),
               parse_bounded_json(std::string(field.text()), kMaxValueDepth));
  return object.take();
}

std::vector<FieldName> RecordList::names() const {
  std::vector<FieldName> out;
  std::vector<bool> seen;
  for (const FieldText& field : fields_) {
    if (seen.size() <= field.name) seen.resize(field.name + 1);
    if (!seen[field.name]) {
      seen[field.name] = true;
      out.push_back(field.name);
    }
  }
  return out;
}

void RecordList::add_field(FieldName name, std::string_view text) {
  if (text.size() > UINT32_MAX) throw Error("a record value of 4 GiB or more, too large to compare");
  const FieldText field{name, static_cast<std::uint32_t>(text.size()), text.data()};
  if (last_seen_.size() <= name) last_seen_.resize(std::max<std::size_t>(name + 1, 64));
  const std::size_t record = size() + 1;
  auto& [last_record, at] = last_seen_[name];
  if (last_record == record) {
    fields_[at] = field;  // a repeated key: the last value, in the first place
    return;
  }
  last_record = record;
  at = fields_.size();
  fields_.push_back(field);
}

void RecordList::add_field_copied(FieldName name, std::string_view text) {
  const std::size_t records = size();
  if (records > 0) {
    // the field in this place of the record before
    const std::size_t place = fields_.size() - starts_[records];
    const std::size_t before = starts_[records - 1] + place;
    if (before < starts_[records]) {
      const FieldText& same = fields_[before];
      if (same.name == name && same.text() == text) {
        add_field(name, same.text());
        return;
      }
    }
  }
  add_field(name, store_->keep(text));
}

void RecordList::end_record() { starts_.push_back(fields_.size()); }

void RecordList::add_object(const Json& object, std::initializer_list<const char*> leave_out) {
  for (auto it = object.begin(); it != object.end(); ++it) {
    const std::string& key = it.key();
    if (std::any_of(leave_out.begin(), leave_out.end(), [&](const char* n) { return key == n; }))
      continue;
    add_field(field_name(key), store_->keep(dump_line(*it)));
  }
  end_record();
}

void RecordList::reserve(std::size_t records, std::size_t fields) {
  starts_.reserve(records + 1);
  fields_.reserve(fields);
}

}  // namespace vin::diagnostics
