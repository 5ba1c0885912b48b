#include "vin/diagnostics/archive/module_details.h"

#include "vin/diagnostics/text/type_names.h"

namespace vin::diagnostics {
namespace {

using Kind = PickleValue::Kind;

constexpr int kMaxValueDepth = 32;  // deeper containers are described by their type

// TorchScript's pickler names a storage type after LibTorch's scalar type:
// `torch.<ScalarTypeName>Storage`.
struct StorageTypeName {
  std::string_view storage;
  StorageDtype dtype;
};
constexpr StorageTypeName kStorageTypes[] = {
    {"FloatStorage", {"torch.float32", 4}},
    {"DoubleStorage", {"torch.float64", 8}},
    {"HalfStorage", {"torch.float16", 2}},
    {"BFloat16Storage", {"torch.bfloat16", 2}},
    {"ComplexHalfStorage", {"torch.complex32", 4}},
    {"ComplexFloatStorage", {"torch.complex64", 8}},
    {"ComplexDoubleStorage", {"torch.complex128", 16}},
    {"ByteStorage", {"torch.uint8", 1}},
    {"CharStorage", {"torch.int8", 1}},
    {"ShortStorage", {"torch.int16", 2}},
    {"IntStorage", {"torch.int32", 4}},
    {"LongStorage", {"torch.int64", 8}},
    {"UInt16Storage", {"torch.uint16", 2}},
    {"UInt32Storage", {"torch.uint32", 4}},
    {"UInt64Storage", {"torch.uint64", 8}},
    {"BoolStorage", {"torch.bool", 1}},
    {"QInt8Storage", {"torch.qint8", 1}},
    {"QUInt8Storage", {"torch.quint8", 1}},
    {"QInt32Storage", {"torch.qint32", 4}},
    {"QUInt4x2Storage", {"torch.quint4x2", 1}},
    {"QUInt2x4Storage", {"torch.quint2x4", 1}},
    {"Float8_e5m2Storage", {"torch.float8_e5m2", 1}},
    {"Float8_e4m3fnStorage", {"torch.float8_e4m3fn", 1}},
    {"Float8_e5m2fnuzStorage", {"torch.float8_e5m2fnuz", 1}},
    {"Float8_e4m3fnuzStorage", {"torch.float8_e4m3fnuz", 1}},
};

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

std::optional<StorageDtype> storage_dtype(std::string_view storage_type) {
  constexpr std::string_view kPrefix = "torch.";
  if (storage_type.substr(0, kPrefix.size()) != kPrefix) return std::nullopt;
  storage_type.remove_prefix(kPrefix.size());
  for (const auto& known : kStorageTypes)
    if (known.storage == storage_type) return known.dtype;
  return std::nullopt;
}

TensorMetadata tensor_metadata(const std::string& name, const char* kind, PickleRef tensor,
                               const StorageChecksums& checksums) {
  // the rebuild call's arguments: (storage, offset, size, stride, ...); the storage's persistent
  // id: ('storage', type, key, location, numel); both checked by the pickle reader
  const PickleRef storage = tensor->items.at(0);
  const auto dtype = storage_dtype(storage->text);
  if (!dtype) throw UnsupportedPickle("a tensor of storage type " + storage->text);
  const PickleRef key = storage->items.at(2);
  const PickleRef location = storage->items.at(3);
  if (key->kind != Kind::string || location->kind != Kind::string)
    throw UnsupportedPickle("a storage reference without a key or location");
  TensorMetadata t;
  t.name = name;
  t.kind = kind;
  for (const PickleRef size : tensor->items.at(2)->items) t.shape.push_back(size->integer);
  t.dtype = dtype->dtype;
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
