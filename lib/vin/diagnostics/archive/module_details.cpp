#include "vin/diagnostics/archive/module_details.h"

#include "vin/diagnostics/text/type_names.h"

namespace vin::diagnostics {
namespace {

using Kind = PickleValue::Kind;

constexpr int kMaxValueDepth = 32;  // deeper containers are described by their type


bool is_plain(const Json& value) { return !value.is_object(); }

Json value_at_depth(PickleRef value, int depth) {
  switch (value->kind) {
    case Kind::none:
      return nullptr;
    case Kind::boolean:
      return value->boolean;
    case Kind::integer:
      return value->integer;
    case Kind::floating:
      return json_float(value->floating);
    case Kind::string:
      return value->text;
    case Kind::tuple:
    case Kind::list: {
      const char* marker = value->kind == Kind::tuple ? "builtins.tuple" : "builtins.list";
      if (depth >= kMaxValueDepth) return type_marker(marker);
      Json items = Json::array();
      for (const PickleRef item : value->items) {
        Json converted = value_at_depth(item, depth + 1);
        if (!is_plain(converted)) return type_marker(marker);
        items.push_back(std::move(converted));
      }
      return items;
    }
    case Kind::dict:
      return type_marker("builtins.dict");
    case Kind::bytes:
      return type_marker("builtins.bytes");
    case Kind::tensor:
      return type_marker("torch.Tensor");
    case Kind::object:
      return type_marker(python_type_name(value->text));
    case Kind::opaque:  // a call such as torch.device('cpu'): the callable names the type
      if (!value->text.empty()) return type_marker(value->text);
      break;
    case Kind::global:
    case Kind::storage:
      break;
  }
  throw UnsupportedPickle("an attribute value this reader cannot describe");
}

}  // namespace

const Dtype* storage_dtype(std::string_view storage_type) {
  constexpr std::string_view kPrefix = "torch.";
  if (storage_type.substr(0, kPrefix.size()) != kPrefix) return nullptr;
  return dtype_of_storage(storage_type.substr(kPrefix.size()));
}

TensorMetadata tensor_metadata(const std::string& name, const char* kind, PickleRef tensor,
                               const StorageChecksums& checksums) {
  // the rebuild call's arguments: (storage, offset, size, stride, ...); the storage's persistent
  // id: ('storage', type, key, location, numel); both checked by the pickle reader
  const PickleRef storage = tensor->items.at(0);
  const Dtype* dtype = storage_dtype(storage->text);
  if (!dtype) throw UnsupportedPickle("a tensor of storage type " + storage->text);
  const PickleRef key = storage->items.at(2);
  const PickleRef location = storage->items.at(3);
  if (key->kind != Kind::string || location->kind != Kind::string)
    throw UnsupportedPickle("a storage reference without a key or location");
  TensorMetadata t;
  t.name = name;
  t.kind = kind;
  for (const PickleRef size : tensor->items.at(2)->items) t.shape.push_back(size->integer);
  t.dtype = dtype->python_name();
  t.device = location->text;
  t.requires_grad = tensor->requires_grad;
  t.numel = tensor->numel;
  if (__builtin_mul_overflow(t.numel, std::int64_t{dtype->element_size}, &t.nbytes))
    throw UnsupportedPickle("a tensor whose size in bytes overflows");
  if (const auto it = checksums.find(key->text); it != checksums.end())
    t.storage_crc32 = it->second;
  return t;
}

Json attribute_value(PickleRef value) { return value_at_depth(value, 0); }

}  // namespace vin::diagnostics
