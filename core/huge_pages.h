// Large tables backed by transparent huge pages.
//
// A table of millions of entries touched at random (the matcher's posted
// receives, the messages in flight and the pending events of a direct
// all-reduce run message by message) misses the TLB on nearly every access
// with 4 KiB pages, and faults its growth in a page at a time; 2 MiB pages
// cut both (the 1,024-NPU direct all-reduce with --no-aggregation runs in
// about half the time: docs/benchmarks.md). Linux backs anonymous memory
// marked MADV_HUGEPAGE with them when its policy is "madvise" (Debian's
// default) or "always"; elsewhere the hint is ignored and only the
// alignment differs. Below 2 MiB an allocation goes to operator new as usual.
#pragma once

#include <sys/mman.h>

#include <cstddef>
#include <cstdlib>
#include <new>

namespace sim {

inline constexpr std::size_t kHugePage = std::size_t{2} << 20;

inline void* allocate_table(std::size_t bytes) {
  if (bytes < kHugePage) return ::operator new(bytes);
  const std::size_t rounded = (bytes + kHugePage - 1) / kHugePage * kHugePage;
  void* p = std::aligned_alloc(kHugePage, rounded);
  if (p == nullptr) throw std::bad_alloc();
#ifdef MADV_HUGEPAGE
  ::madvise(p, rounded, MADV_HUGEPAGE);  // a hint: no huge page, no harm
#endif
  return p;
}

inline void free_table(void* p, std::size_t bytes) noexcept {
  if (bytes < kHugePage) {
    ::operator delete(p);
  } else {
    std::free(p);
  }
}

// A table of `bytes` zero bytes, mapped fresh (zero pages cost nothing until
// touched), with `huge` marked for huge pages: a sparse table whose touched
// entries spread over many 4 KiB pages (the analytical network's NPU-pair
// index) then faults once per 2 MiB instead of once per 4 KiB (about 10 us
// each on a virtual machine), but holds whole 2 MiB pages where it is touched
// at all. Free with free_zeroed_table and the same size.
inline void* allocate_zeroed_table(std::size_t bytes, bool huge) {
  const std::size_t rounded = (bytes + kHugePage - 1) / kHugePage * kHugePage;
  void* p = ::mmap(nullptr, rounded, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) throw std::bad_alloc();
#ifdef MADV_HUGEPAGE
  if (huge) ::madvise(p, rounded, MADV_HUGEPAGE);
#endif
  return p;
}

inline void free_zeroed_table(void* p, std::size_t bytes) noexcept {
  ::munmap(p, (bytes + kHugePage - 1) / kHugePage * kHugePage);
}

// For a unique_ptr to such a table.
struct ZeroedTableDeleter {
  std::size_t bytes = 0;
  void operator()(void* p) const noexcept { free_zeroed_table(p, bytes); }
};

// A std::allocator for the vectors behind such tables (FlatMap, IndexPool,
// the event queue's buckets).
template <class T>
struct HugePageAllocator {
  using value_type = T;
  HugePageAllocator() = default;
  template <class U>
  HugePageAllocator(const HugePageAllocator<U>& /*other*/) noexcept {}
  T* allocate(std::size_t n) { return static_cast<T*>(allocate_table(n * sizeof(T))); }
  void deallocate(T* p, std::size_t n) noexcept { free_table(p, n * sizeof(T)); }
  template <class U>
  bool operator==(const HugePageAllocator<U>& /*other*/) const noexcept {
    return true;
  }
};

}  // namespace sim
