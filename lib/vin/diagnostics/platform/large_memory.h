// Memory for the large arrays diff builds at scale (a record file's bytes, the fields of a million
// records, their index): blocks of 2 MiB or more are mapped on their own and offered to the
// kernel as transparent huge pages (madvise, where the system allows it), so that a gigabyte is
// faulted in about 500 pieces instead of 250,000. On virtual machines a fault costs microseconds:
// the faults of 4 KiB pages took a third of a 1,000,000-record diff. Smaller blocks, and systems
// without madvise(MADV_HUGEPAGE), use operator new.
#pragma once

#include <cstddef>
#include <memory>

namespace vin::diagnostics {

/// `bytes` of memory (uninitialised); throws std::bad_alloc when there is none.
void* allocate_large(std::size_t bytes);
/// Frees what allocate_large(bytes) returned.
void free_large(void* block, std::size_t bytes) noexcept;

/// A std::allocator through allocate_large, for the vectors that grow to millions of items.
template <class T>
struct LargeAllocator {
  using value_type = T;
  LargeAllocator() = default;
  template <class U>
  LargeAllocator(const LargeAllocator<U>&) {}  // NOLINT: converting, as allocators are
  T* allocate(std::size_t n) { return static_cast<T*>(allocate_large(n * sizeof(T))); }
  void deallocate(T* p, std::size_t n) noexcept { free_large(p, n * sizeof(T)); }
  template <class U>
  bool operator==(const LargeAllocator<U>&) const {
    return true;
  }
  template <class U>
  bool operator!=(const LargeAllocator<U>&) const {
    return false;
  }
};

/// A buffer of bytes from allocate_large, uninitialised, freed with it.
class LargeBuffer {
 public:
  explicit LargeBuffer(std::size_t capacity)
      : data_(static_cast<char*>(allocate_large(capacity))), capacity_(capacity) {}
  ~LargeBuffer() { free_large(data_, capacity_); }
  LargeBuffer(const LargeBuffer&) = delete;
  LargeBuffer& operator=(const LargeBuffer&) = delete;

  char* data() { return data_; }
  const char* data() const { return data_; }
  std::size_t size() const { return size_; }
  /// The bytes in use (at most the capacity).
  void set_size(std::size_t size) { size_ = size < capacity_ ? size : capacity_; }

 private:
  char* data_;
  std::size_t capacity_;
  std::size_t size_ = 0;
};

}  // namespace vin::diagnostics
