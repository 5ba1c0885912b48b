#include "vin/diagnostics/torch/torch_save_reader.h"

#include "vin/diagnostics/torch/dtype_names.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <cstring>
#include <unordered_map>

#include "vin/diagnostics/formats/model_file.h"
#include "vin/diagnostics/pickle/pickle_reader.h"
#include "vin/diagnostics/pickle/saved_tensor.h"
#include "vin/diagnostics/records/error.h"
#include "vin/diagnostics/text/printable.h"
#include "vin/diagnostics/torch/dtype_names.h"

namespace vin::diagnostics {
namespace {

using Kind = PickleValue::Kind;

// Inputs nest a few levels; the conversion below recurses once per level.
constexpr std::size_t kMaxInputNesting = 1000;
constexpr std::size_t kMaxStorageBytes = std::size_t{64} << 30;

// `torch.HalfStorage` -> float16; only dtypes whose storage items are their elements are read
// (the reader makes a tensor of a storage's bytes)
std::optional<c10::ScalarType> storage_dtype(const std::string& type) {
  static constexpr std::string_view kPrefix = "torch.";
  if (type.compare(0, kPrefix.size(), kPrefix) != 0) return std::nullopt;
  const Dtype* dtype = dtype_of_storage(std::string_view(type).substr(kPrefix.size()));
  if (!dtype || !dtype->storage_items_are_elements) return std::nullopt;
  return scalar_type_of(*dtype);
}

std::vector<std::int64_t> int_tuple(PickleRef value) {
  std::vector<std::int64_t> out;
  for (PickleRef item : value->items) out.push_back(item->integer);
  return out;
}

class Converter {
 public:
  explicit Converter(const TorchSaveSource& source) : path_(source.label()), source_(source) {}

  c10::IValue convert(PickleRef value, std::size_t depth = 0) {
    if (depth > kMaxInputNesting)
      throw Error(path_ + ": its values nest more than " + std::to_string(kMaxInputNesting) +
                  " deep, more than inputs of a forward do");
    if (const auto it = done_.find(value); it != done_.end()) return it->second;
    c10::IValue result = make(value, depth);
    done_.emplace(value, result);
    return result;
  }

 private:
  c10::IValue make(PickleRef value, std::size_t depth) {
    switch (value->kind) {
      case Kind::none:
        return c10::IValue();
      case Kind::boolean:
        return value->boolean;
      case Kind::integer:
        return value->integer;
      case Kind::floating:
        return value->floating;
      case Kind::string:
        return value->text;
      case Kind::tuple: {
        std::vector<c10::IValue> items;
        for (PickleRef item : value->items) items.push_back(convert(item, depth + 1));
        return c10::ivalue::Tuple::create(std::move(items));
      }
      case Kind::list: {
        c10::impl::GenericList list(c10::AnyType::get());
        for (PickleRef item : value->items) list.push_back(convert(item, depth + 1));
        return list;
      }
      case Kind::dict: {
        c10::impl::GenericDict dict(c10::AnyType::get(), c10::AnyType::get());
        for (std::size_t i = 0; i + 1 < value->items.size(); i += 2)
          dict.insert_or_assign(convert(value->items[i], depth + 1),
                                convert(value->items[i + 1], depth + 1));
        return dict;
      }
      case Kind::tensor:
        return tensor(value);
      case Kind::bytes:
        throw Error(path_ + ": holds a bytes value, which no forward takes");
      case Kind::object:
        throw Error(path_ + ": holds a pickled " + printable(value->text, 200) +
                    " object, which this tool does not rebuild (inputs are tensors, numbers, "
                    "strings and containers of these)");
      case Kind::global:
      case Kind::opaque:
      case Kind::storage:
        break;
    }
    if (value->text.find("_rebuild_sparse") != std::string::npos)
      throw Error(path_ + ": holds sparse tensors (" + value->text +
                  "), which this tool does not read; save dense tensors (x.to_dense())");
    const std::string what = value->text.empty() ? "an object" : printable(value->text, 200);
    throw Error(path_ + ": holds " + what +
                ", which this tool does not rebuild (inputs are tensors, numbers, strings and "
                "containers of these)");
  }

  // the storage's elements, read once however many tensors view it, from where the file keeps
  // them (the source checked that they hold the storage)
  at::Tensor storage(PickleRef value, c10::ScalarType dtype) {
    const SavedTensor saved = saved_tensor(value, path_);
    if (const auto it = storages_.find(saved.storage_key); it != storages_.end())
      return it->second;
    const StorageBytes bytes = source_.storage(saved, "a tensor");
    const std::int64_t numel = saved.storage_numel;
    const std::size_t element = c10::elementSize(dtype);
    const std::uint64_t size = static_cast<std::uint64_t>(numel) * element;
    if (size > kMaxStorageBytes)
      throw Error(path_ + ": a storage of " + std::to_string(size) + " bytes, more than " +
                  std::to_string(kMaxStorageBytes >> 30) + " GiB");
    at::Tensor flat = at::empty(
        {numel},
        at::TensorOptions().dtype(c10::isQIntType(dtype) ? c10::toUnderlying(dtype) : dtype));
    auto* out = static_cast<char*>(flat.data_ptr());
    for (std::uint64_t done = 0; done < size;) {  // a piece at a time: read_at's own bound
      const std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(size - done, 1 << 26));
      if (bytes.file->read_at(bytes.begin + done, out + done, n) != n)
        throw Error(path_ + ": cut short inside a storage");
      done += n;
    }
    if (bytes.big_endian && element > 1) {  // little-endian, as this machine's tensors are
      const std::size_t unit = c10::isComplexType(dtype) ? element / 2 : element;
      for (std::uint64_t i = 0; i < size; i += unit) std::reverse(out + i, out + i + unit);
    }
    storages_.emplace(saved.storage_key, flat);
    return flat;
  }

  c10::IValue tensor(PickleRef value) {
    const auto& a = value->items;  // (storage, offset, size, stride, ...), checked by the reader
    const PickleRef storage_ref = a[0];
    const auto dtype = storage_dtype(storage_ref->text);
    if (!dtype)
      throw Error(path_ + ": a tensor of storage type " + printable(storage_ref->text, 100) +
                  ", which this tool does not read");
    const at::Tensor flat = storage(value, *dtype);
    const auto size = int_tuple(a[2]);
    const auto stride = int_tuple(a[3]);
    const std::int64_t offset = a[1]->integer;
    at::Tensor t;
    if (value->text == "torch._utils._rebuild_qtensor") {
      t = quantized(flat, *dtype, size, stride, offset, a[4]);
    } else {
      t = flat.as_strided(size, stride, offset);
    }
    if (value->requires_grad && t.is_floating_point()) t.set_requires_grad(true);
    return t;
  }

  // _rebuild_qtensor's quantizer: (torch.per_tensor_affine, scale, zero_point) or
  // (torch.per_channel_affine, scales, zero_points, axis)
  at::Tensor quantized(const at::Tensor& flat, c10::ScalarType dtype,
                       const std::vector<std::int64_t>& size,
                       const std::vector<std::int64_t>& stride, std::int64_t offset,
                       PickleRef params) {
    const auto& q = params->items;
    if (params->kind != Kind::tuple || q.empty() || q[0]->kind != Kind::global)
      throw Error(path_ + ": a quantized tensor without a quantizer this tool reads");
    const at::Tensor values = flat.as_strided(size, stride, offset).contiguous();
    if (q[0]->text == "torch.per_tensor_affine" && q.size() == 3 && q[1]->kind == Kind::floating &&
        q[2]->kind == Kind::integer)
      return at::_make_per_tensor_quantized_tensor(values, q[1]->floating, q[2]->integer)
          .to(at::TensorOptions().dtype(dtype), /*non_blocking=*/false, /*copy=*/false);
    if (q[0]->text == "torch.per_channel_affine" && q.size() == 4 && q[1]->kind == Kind::tensor &&
        q[2]->kind == Kind::tensor && q[3]->kind == Kind::integer)
      return at::_make_per_channel_quantized_tensor(values, tensor(q[1]).toTensor(),
                                                    tensor(q[2]).toTensor(), q[3]->integer);
    throw Error(path_ + ": a quantized tensor whose quantizer " + printable(q[0]->text, 100) +
                " this tool does not read");
  }

  const std::string& path_;
  const TorchSaveSource& source_;
  std::unordered_map<PickleRef, c10::IValue> done_;
  std::unordered_map<std::string, at::Tensor> storages_;
};

}  // namespace

c10::IValue read_torch_save_value(const std::string& path) {
  const ClassifiedFile file = open_model_file(path, kInputs, "a torch.save file");
  return read_torch_save_value(*open_torch_save(file, std::uint64_t{1} << 30));
}

c10::IValue read_torch_save_value(const ZipArchive& zip) {
  if (zip.entries().empty()) throw Error(zip.path() + ": an empty zip archive");
  const TorchSaveZip source(zip, zip.path(), std::uint64_t{1} << 30);
  return Converter(source).convert(source.root());
}

c10::IValue read_torch_save_value(const TorchSaveSource& source) {
  return Converter(source).convert(source.root());
}

}  // namespace vin::diagnostics
