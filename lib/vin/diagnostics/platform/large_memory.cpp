#include "vin/diagnostics/platform/large_memory.h"

#include <cstdint>
#include <new>

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace vin::diagnostics {
namespace {

constexpr std::size_t kHugePage = std::size_t{2} << 20;

#if defined(__linux__) && defined(MADV_HUGEPAGE)
constexpr bool kHugePages = true;
#else
constexpr bool kHugePages = false;
#endif

bool mapped(std::size_t bytes) { return kHugePages && bytes >= kHugePage; }
std::size_t rounded(std::size_t bytes) { return (bytes + kHugePage - 1) / kHugePage * kHugePage; }

}  // namespace

void* allocate_large(std::size_t bytes) {
  if (!mapped(bytes)) return ::operator new(bytes == 0 ? 1 : bytes);
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  // a mapping aligned to a huge page: map one more, then give back the unaligned ends
  const std::size_t size = rounded(bytes);
  void* raw = mmap(nullptr, size + kHugePage, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
                   -1, 0);
  if (raw == MAP_FAILED) throw std::bad_alloc();
  const auto start = reinterpret_cast<std::uintptr_t>(raw);
  const std::uintptr_t aligned = (start + kHugePage - 1) / kHugePage * kHugePage;
  if (aligned > start) munmap(raw, aligned - start);
  if (const std::uintptr_t tail = start + size + kHugePage - (aligned + size); tail > 0)
    munmap(reinterpret_cast<void*>(aligned + size), tail);
  void* block = reinterpret_cast<void*>(aligned);
  madvise(block, size, MADV_HUGEPAGE);  // advice: where refused, 4 KiB pages as before
  return block;
#else
  return nullptr;
#endif
}

void free_large(void* block, std::size_t bytes) noexcept {
  if (!block) return;
  if (!mapped(bytes)) {
    ::operator delete(block);
    return;
  }
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  munmap(block, rounded(bytes));
#endif
}

}  // namespace vin::diagnostics
