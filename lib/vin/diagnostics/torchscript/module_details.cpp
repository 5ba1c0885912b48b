#include "vin/diagnostics/torchscript/module_details.h"

#include <limits>
#include <optional>

#include "vin/diagnostics/text/type_names.h"

namespace vin::diagnostics {
namespace {

using Kind = PickleValue::Kind;

constexpr int kMaxValueDepth = 32;  // deeper containers are described by their type


bool is_plain(const Json& value) { return !value.is_object(); }

// nothing once the value passes `room`
std::optional<Json> value_at_depth(PickleRef value, int depth, PrintRoom& room) {
  const auto marker = [&](const char* type) -> std::optional<Json> {
    Json m = type_marker(type);
    if (!room.spend(printed_size(m, room.left))) return std::nullopt;
    return m;
  };
  switch (value->kind) {
    case Kind::none:
    case Kind::boolean:
    case Kind::integer:
    case Kind::floating:
      if (!room.spend(8)) return std::nullopt;
      if (value->kind == Kind::none) return Json(nullptr);
      if (value->kind == Kind::boolean) return Json(value->boolean);
      if (value->kind == Kind::integer) return Json(value->integer);
      return json_float(value->floating);
    case Kind::string:
      if (!room.spend(value->text.size() + 2)) return std::nullopt;
      return Json(value->text);
    case Kind::tuple:
    case Kind::list: {
      const char* type = value->kind == Kind::tuple ? "builtins.tuple" : "builtins.list";
      if (depth >= kMaxValueDepth) return marker(type);
      if (!room.spend(2 + value->items.size())) return std::nullopt;
      Json items = Json::array();
      for (const PickleRef item : value->items) {
        std::optional<Json> converted = value_at_depth(item, depth + 1, room);
        if (!converted) return std::nullopt;
        if (!is_plain(*converted)) return marker(type);
        items.push_back(std::move(*converted));
      }
      return items;
    }
    case Kind::dict:
      return marker("builtins.dict");
    case Kind::bytes:
      return marker("builtins.bytes");
    case Kind::tensor:
      return marker("torch.Tensor");
    case Kind::object:
      return marker(python_type_name(value->text).c_str());
    case Kind::opaque:  // a call such as torch.device('cpu'): the callable names the type
      if (!value->text.empty()) return marker(value->text.c_str());
      break;
    case Kind::global:
    case Kind::storage:
      break;
  }
  throw UnsupportedPickle("an attribute value this reader cannot describe");
}

// The type marker of a value past the budget: DetailBudget's for the JSON it would have been
// (a tuple prints as a list; a value described by its type marker, an object, as a dict)
const char* marker_type(PickleRef value) {
  switch (value->kind) {
    case Kind::none:
      return "builtins.NoneType";
    case Kind::boolean:
      return "builtins.bool";
    case Kind::integer:
      return "builtins.int";
    case Kind::floating:
      return "builtins.float";
    case Kind::string:
      return "builtins.str";
    case Kind::tuple:
    case Kind::list:
      return "builtins.list";
    default:
      return "builtins.dict";
  }
}

}  // namespace

namespace {

const Dtype& tensor_dtype(PickleRef tensor) {
  // the rebuild call's arguments: (storage, offset, size, stride, ...); the storage's persistent
  // id: ('storage', type, key, location, numel); both checked by the pickle reader
  const Dtype* dtype = storage_dtype(tensor->items.at(0)->text);
  if (!dtype) throw UnsupportedPickle("a tensor of storage type " + tensor->items.at(0)->text);
  return *dtype;
}

}  // namespace

std::int64_t tensor_nbytes(PickleRef tensor) {
  std::int64_t nbytes = 0;
  if (__builtin_mul_overflow(tensor->numel, std::int64_t{tensor_dtype(tensor).element_size},
                             &nbytes))
    throw UnsupportedPickle("a tensor whose size in bytes overflows");
  return nbytes;
}

std::optional<TensorMetadata> listed_tensor(const std::string& name, const char* kind,
                                            PickleRef tensor, const StorageChecksums& checksums,
                                            DetailBudget& budget) {
  const Dtype& dtype = tensor_dtype(tensor);
  const PickleRef storage = tensor->items.at(0);
  const PickleRef key = storage->items.at(2);
  const PickleRef location = storage->items.at(3);
  if (key->kind != Kind::string || location->kind != Kind::string)
    throw UnsupportedPickle("a storage reference without a key or location");
  const std::int64_t nbytes = tensor_nbytes(tensor);
  const std::vector<PickleRef>& sizes = tensor->items.at(2)->items;
  const std::string dtype_name = dtype.python_name();
  if (!budget.admit_tensor(sizes.size(), name.size() + dtype_name.size() + location->text.size()))
    return std::nullopt;
  TensorMetadata t;
  t.name = name;
  t.kind = kind;
  t.shape.reserve(sizes.size());
  for (const PickleRef size : sizes) t.shape.push_back(size->integer);
  t.dtype = dtype_name;
  t.device = location->text;
  t.requires_grad = tensor->requires_grad;
  t.numel = tensor->numel;
  t.nbytes = nbytes;
  if (const auto it = checksums.find(key->text); it != checksums.end())
    t.storage_crc32 = it->second;
  return t;
}

Json attribute_value(PickleRef value) {
  PrintRoom room{std::numeric_limits<std::uint64_t>::max()};
  return *value_at_depth(value, 0, room);
}

Json admitted_attribute(PickleRef value, DetailBudget& budget) {
  return budget.admit_shared(value, [&](std::uint64_t limit, bool& fits) {
    PrintRoom room{limit};
    std::optional<Json> built = value_at_depth(value, 0, room);
    fits = built.has_value();
    return fits ? std::move(*built) : type_marker(marker_type(value));
  });
}

}  // namespace vin::diagnostics
