#include "vin/diagnostics/pickle/saved_tensor.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <utility>

#include "vin/diagnostics/container/crc32.h"
#include "vin/diagnostics/records/error.h"
#include "vin/diagnostics/text/printable.h"

namespace vin::diagnostics {
namespace {

using Kind = PickleValue::Kind;

std::vector<std::int64_t> integers(PickleRef tuple) {
  std::vector<std::int64_t> out;
  out.reserve(tuple->items.size());
  for (PickleRef item : tuple->items) out.push_back(item->integer);
  return out;
}

// The tensor's dimensions with those of size 1 left out and each dimension that steps over
// the next one whole merged with it (a contiguous tensor becomes one dimension of stride 1):
// the fewest, longest runs of bytes to read.
std::vector<std::pair<std::int64_t, std::int64_t>> merged_dimensions(const SavedTensor& t) {
  std::vector<std::pair<std::int64_t, std::int64_t>> dims;  // (size, stride), outermost first
  for (std::size_t i = 0; i < t.shape.size(); ++i) {
    if (t.shape[i] == 1) continue;
    if (!dims.empty() && dims.back().second == t.shape[i] * t.strides[i]) {
      dims.back() = {dims.back().first * t.shape[i], t.strides[i]};
      continue;
    }
    dims.emplace_back(t.shape[i], t.strides[i]);
  }
  return dims;
}

// The file's bytes [begin, end) mapped read-only, unmapped when it goes: a tensor's elements
// may be spread over its storage in any order (a transposed matrix), and the page cache
// serves them where a read per element would not.
class MappedBytes {
 public:
  MappedBytes(const InputFile& file, std::uint64_t begin, std::uint64_t end) {
    const auto page = static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE));
    const std::uint64_t start = begin / page * page;
    length_ = static_cast<std::size_t>(end - start);
    void* at = ::mmap(nullptr, length_, PROT_READ, MAP_PRIVATE, file.descriptor(),
                      static_cast<off_t>(start));
    if (at == MAP_FAILED)
      throw Error(file.path() + ": cannot map bytes " + std::to_string(begin) + " to " +
                  std::to_string(end) + " to read a tensor's elements: " + std::strerror(errno));
    map_ = static_cast<const unsigned char*>(at);
    data_ = map_ + (begin - start);
  }
  ~MappedBytes() { ::munmap(const_cast<unsigned char*>(map_), length_); }
  MappedBytes(const MappedBytes&) = delete;
  MappedBytes& operator=(const MappedBytes&) = delete;
  const unsigned char* data() const { return data_; }

 private:
  const unsigned char* map_ = nullptr;
  const unsigned char* data_ = nullptr;
  std::size_t length_ = 0;
};

// Bytes fed to the CRC in order, gathered into pieces (one call per element of a transposed
// matrix would cost more than the CRC), each element's bytes reversed first for a big-endian
// storage (`unit`: the bytes of one number; a complex element is two).
class ElementCrc {
 public:
  explicit ElementCrc(std::size_t unit) : unit_(unit) {}
  void add(const unsigned char* bytes, std::size_t n) {
    if (unit_ <= 1 && n >= kPiece) {  // a long run: straight from the mapping
      flush();
      crc_ = crc32_update(crc_, bytes, n);
      return;
    }
    while (n > 0) {
      const std::size_t take = std::min(n, kPiece - buffer_.size());
      const std::size_t at = buffer_.size();
      buffer_.insert(buffer_.end(), bytes, bytes + take);
      if (unit_ > 1)
        for (std::size_t i = at; i < buffer_.size(); i += unit_)
          std::reverse(buffer_.begin() + static_cast<std::ptrdiff_t>(i),
                       buffer_.begin() + static_cast<std::ptrdiff_t>(i + unit_));
      bytes += take;
      n -= take;
      if (buffer_.size() == kPiece) flush();
    }
  }
  std::uint32_t value() {
    flush();
    return crc_;
  }

 private:
  // a multiple of every element size (16 bytes at most: complex128)
  static constexpr std::size_t kPiece = std::size_t{1} << 16;
  void flush() {
    crc_ = crc32_update(crc_, buffer_.data(), buffer_.size());
    buffer_.clear();
  }
  std::size_t unit_;
  std::uint32_t crc_ = 0;
  std::vector<unsigned char> buffer_;
};

}  // namespace

const Dtype* storage_dtype(std::string_view storage_type) {
  constexpr std::string_view kPrefix = "torch.";
  if (storage_type.substr(0, kPrefix.size()) != kPrefix) return nullptr;
  return dtype_of_storage(storage_type.substr(kPrefix.size()));
}

std::string SavedTensor::identity() const {
  std::string out = storage_key;
  out += '@' + std::to_string(offset) + ':';
  for (const std::int64_t d : shape) out += std::to_string(d) + ',';
  out += ':';
  for (const std::int64_t s : strides) out += std::to_string(s) + ',';
  return out;
}

SavedTensor saved_tensor(PickleRef value, const std::string& where) {
  // (storage, offset, size, stride, ...): their kinds checked by the pickle reader
  const auto& a = value->items;
  const PickleValue& storage = *a[0];  // ('storage', type, key, location, numel)
  SavedTensor t;
  t.dtype = storage_dtype(storage.text);
  if (!t.dtype)
    throw Error(where + ": a tensor of storage type " + printable(storage.text, 100) +
                ", which this tool does not know");
  if (storage.items[2]->kind == Kind::string) t.storage_key = storage.items[2]->text;
  else if (storage.items[2]->kind == Kind::integer) t.storage_key = std::to_string(storage.items[2]->integer);
  else throw Error(where + ": a tensor whose storage key is neither a string nor a number");
  if (storage.items[3]->kind == Kind::string) t.device = storage.items[3]->text;
  t.storage_numel = storage.numel;
  t.offset = a[1]->integer;
  t.shape = integers(a[2]);
  t.strides = integers(a[3]);
  t.numel = value->numel;
  t.requires_grad = value->requires_grad;
  t.parameter = value->text == "torch._utils._rebuild_parameter";
  return t;
}

std::optional<std::uint64_t> bytes_reached(const SavedTensor& t) {
  if (t.numel == 0) return 0;
  if (t.offset < 0 || t.strides.size() != t.shape.size()) return std::nullopt;
  std::int64_t last = t.offset;  // the element the last index reaches
  for (std::size_t i = 0; i < t.shape.size(); ++i) {
    std::int64_t step = 0;
    if (t.strides[i] < 0 || __builtin_mul_overflow(t.shape[i] - 1, t.strides[i], &step) ||
        __builtin_add_overflow(last, step, &last))
      return std::nullopt;
  }
  std::int64_t bytes = 0;
  if (__builtin_add_overflow(last, std::int64_t{1}, &last) ||
      __builtin_mul_overflow(last, std::int64_t{t.dtype->element_size}, &bytes))
    return std::nullopt;
  return static_cast<std::uint64_t>(bytes);
}

std::vector<std::int64_t> contiguous_strides(const std::vector<std::int64_t>& shape) {
  std::vector<std::int64_t> strides(shape.size(), 1);
  for (std::size_t i = shape.size(); i-- > 1;)
    strides[i - 1] = strides[i] * std::max<std::int64_t>(shape[i], 1);
  return strides;
}

std::optional<std::string> storage_problem(const std::string& what, const Dtype& dtype,
                                           std::int64_t numel, std::uint64_t size) {
  const auto element = static_cast<std::uint64_t>(dtype.element_size);
  if (numel <= 0 || size / element >= static_cast<std::uint64_t>(numel)) return std::nullopt;
  return what + " holds " + std::to_string(size) + " bytes, fewer than the " +
         std::to_string(numel) + " " + std::string(dtype.name) + " elements of its storage";
}

namespace {

// The bytes of one number of `t` to reverse for a big-endian storage (a complex element is two
// numbers), or 1 for a little-endian one
std::size_t swap_unit(const SavedTensor& t, const StorageBytes& bytes) {
  const auto element = static_cast<std::size_t>(t.dtype->element_size);
  if (!bytes.big_endian) return 1;
  return t.dtype->name.rfind("complex", 0) == 0 ? element / 2 : element;
}

// The CRC-32 of the elements of `t` (`dims`: its merged dimensions) where they lie in `bytes`,
// gathered from a read-only mapping of the bytes they reach in runs of contiguous elements
std::uint32_t gathered_elements_crc32(const SavedTensor& t, const StorageBytes& bytes,
                                      const std::vector<std::pair<std::int64_t, std::int64_t>>& dims) {
  const auto element = static_cast<std::uint64_t>(t.dtype->element_size);
  // the elements the tensor reaches: from its offset to its last index (strides are not
  // negative; the pickle reader checked that the tensor fits its storage, and the caller that
  // the storage fits its bytes)
  std::uint64_t last = static_cast<std::uint64_t>(t.offset);
  for (const auto& [size, stride] : dims) last += static_cast<std::uint64_t>((size - 1) * stride);
  const std::uint64_t first_byte = static_cast<std::uint64_t>(t.offset) * element;
  const MappedBytes mapped(*bytes.file, bytes.begin + first_byte,
                           bytes.begin + (last + 1) * element);
  ElementCrc crc(swap_unit(t, bytes));
  // runs of contiguous elements: the innermost dimension when its stride is 1, else one element
  std::size_t outer = dims.size();
  std::uint64_t run = element;
  if (!dims.empty() && dims.back().second == 1) {
    run = static_cast<std::uint64_t>(dims.back().first) * element;
    --outer;
  }
  std::vector<std::int64_t> index(outer, 0);
  for (;;) {
    std::uint64_t at = 0;  // elements from the tensor's offset
    for (std::size_t d = 0; d < outer; ++d)
      at += static_cast<std::uint64_t>(index[d] * dims[d].second);
    crc.add(mapped.data() + at * element, static_cast<std::size_t>(run));
    std::size_t d = outer;
    while (d > 0 && ++index[d - 1] == dims[d - 1].first) index[--d] = 0;
    if (d == 0) break;
  }
  return crc.value();
}

}  // namespace

Crc32Batch::Ticket add_elements_crc32(Crc32Batch& batch, const SavedTensor& t,
                                      const StorageBytes& bytes,
                                      std::optional<Crc32Batch::Ticket> storage_crc) {
  if (t.numel == 0) return batch.known(0);
  const auto element = static_cast<std::uint64_t>(t.dtype->element_size);
  auto dims = merged_dimensions(t);
  const bool little_endian = swap_unit(t, bytes) <= 1;
  // one run of elements in storage order
  const bool contiguous = dims.empty() || (dims.size() == 1 && dims[0].second == 1);
  const std::uint64_t first_byte = static_cast<std::uint64_t>(t.offset) * element;
  const std::uint64_t size = static_cast<std::uint64_t>(t.numel) * element;
  // the whole storage, in order: the container's CRC is the tensor's
  if (contiguous && little_endian && first_byte == 0 && size == bytes.size) {
    if (bytes.crc) return batch.known(*bytes.crc);
    if (storage_crc) return *storage_crc;
  }
  if (contiguous && little_endian)
    return batch.range(*bytes.file, bytes.begin + first_byte, bytes.begin + first_byte + size);
  return batch.computed([t, bytes, dims = std::move(dims)] {
    return gathered_elements_crc32(t, bytes, dims);
  });
}

std::uint32_t elements_crc32(const SavedTensor& t, const StorageBytes& bytes) {
  Crc32Batch batch;
  const auto ticket = add_elements_crc32(batch, t, bytes);
  batch.run();
  return batch.value(ticket);
}

}  // namespace vin::diagnostics
