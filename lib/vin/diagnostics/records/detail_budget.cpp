#include "vin/diagnostics/records/detail_budget.h"

#include <algorithm>
#include <limits>
#include <vector>

namespace vin::diagnostics {
namespace {

// The Python type a JSON value stands for, for the marker of a value past the budget.
const char* python_type_of(const Json& value) {
  switch (value.type()) {
    case Json::value_t::string:
      return "builtins.str";
    case Json::value_t::array:
      return "builtins.list";
    case Json::value_t::object:
      return "builtins.dict";
    case Json::value_t::boolean:
      return "builtins.bool";
    case Json::value_t::number_float:
      return "builtins.float";
    case Json::value_t::null:
      return "builtins.NoneType";
    default:
      return "builtins.int";
  }
}

}  // namespace

std::uint64_t printed_size(const Json& value, std::uint64_t limit) {
  std::uint64_t size = 0;
  std::vector<const Json*> pending{&value};  // no recursion: values may nest deeply
  while (!pending.empty() && size <= limit) {
    const Json* v = pending.back();
    pending.pop_back();
    switch (v->type()) {
      case Json::value_t::string:
        size += v->get_ref<const std::string&>().size() + 2;
        break;
      case Json::value_t::array:
        size += 2 + v->size();
        for (const Json& item : *v) pending.push_back(&item);
        break;
      case Json::value_t::object:
        size += 2 + v->size();
        for (const auto& [key, item] : v->items()) {
          size += key.size() + 3;
          pending.push_back(&item);
        }
        break;
      case Json::value_t::binary:  // an integer past 64 bits, kept as its digits
        size += v->get_binary().size();
        break;
      default:
        size += 8;
    }
  }
  return size;
}

DetailBudget::DetailBudget(std::uint64_t bytes_read) { read(bytes_read); }

void DetailBudget::read(std::uint64_t bytes) {
  constexpr std::uint64_t kMax = std::numeric_limits<std::uint64_t>::max();
  read_ = bytes > kMax - read_ ? kMax : read_ + bytes;
  const std::uint64_t share =
      read_ > kMax / kDetailBytesPerByteRead ? kMax : read_ * kDetailBytesPerByteRead;
  const std::uint64_t grown = std::max(kMinDetailBytes, share);
  left_ += grown - bytes_;  // what was spent stays spent
  bytes_ = grown;
}

bool DetailBudget::charge(std::uint64_t size) {
  if (size <= left_) {
    left_ -= size;
    return true;
  }
  stopped_by_ = "detail_budget";  // named as capture names its quotas
  return false;
}

Json DetailBudget::refuse(const Json& marker) {
  stopped_by_ = "detail_budget";
  return marker;
}

Json DetailBudget::type_marker_of(const Json& value) {
  return type_marker(python_type_of(value));
}

Json DetailBudget::admit(Json value) {
  if (charge(printed_size(value, left_))) return value;
  return type_marker_of(value);
}

bool DetailBudget::admit_tensor(std::size_t rank, std::size_t text_bytes) {
  // a record's keys and numbers take about 160 bytes; a dimension up to 8 printed
  return charge(160 + std::uint64_t{text_bytes} + 8 * std::uint64_t{rank});
}

bool DetailBudget::admit(const TensorMetadata& tensor) {
  return admit_tensor(tensor.shape.size(), tensor.name.size() + tensor.dtype.size() +
                                               (tensor.device ? tensor.device->size() : 0) +
                                               (tensor.key ? tensor.key->size() : 0));
}

}  // namespace vin::diagnostics
