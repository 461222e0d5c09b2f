// Transparent huge pages for the data path's large per-pair arrays.
//
// At 8K VM-pairs a frame touches a few lines of its pair's records in each
// of several arrays (the scheduler's block, the VmPairs: ~10 KB each, 80 MB
// in all, their histories), each a random 4 KB page: every frame then
// misses the TLB several times and walks the page tables. With THP in
// `madvise` mode (Debian's default) a region gets 2 MiB pages only when
// madvise(MADV_HUGEPAGE) is called on it before its pages are first
// touched; this does that for blocks of at least kHugeMin, 2 MiB aligned and
// sized. DPDK's own memory (mempools, rte_hash) is on hugepages whenever the
// EAL has them; these arrays are ordinary heap memory, so they need this
// even then. The advice is a hint: where THP is off or the kernel has no
// free huge page the block stays on 4 KB pages, unchanged otherwise.
// Nothing here runs on the hot path: the arrays are allocated at start-up.
#pragma once

#include <cstddef>
#include <cstdint>
#include <new>

#if defined(__linux__) && __has_include(<sys/mman.h>)
#include <sys/mman.h>
#define UFAB_HUGE_PAGES 1
#endif

namespace ufab::huge_pages {

inline constexpr size_t kHugePage = size_t{2} << 20;
inline constexpr size_t kHugeMin = kHugePage / 2;  // smaller blocks stay on ordinary pages

// The alignment a block of `bytes` gets (at least `align`).
constexpr size_t alignment(size_t bytes, size_t align) {
#ifdef UFAB_HUGE_PAGES
  if (bytes >= kHugeMin && align <= kHugePage) return kHugePage;
#else
  (void)bytes;
#endif
  return align;
}
// The size to allocate for `bytes` at that alignment (whole huge pages).
constexpr size_t rounded(size_t bytes, size_t align) {
  return alignment(bytes, align) == kHugePage ? (bytes + kHugePage - 1) & ~(kHugePage - 1) : bytes;
}

// Uninitialised memory for `bytes` at least `align`-aligned. A large block
// (alignment() == kHugePage) is mapped fresh, 2 MiB aligned, in whole huge
// pages, and advised before any of its pages is touched (memory from the
// malloc heap may have been touched already, and stays on 4 KB pages);
// others come from operator new. Free with release(p, bytes, align), the
// same arguments.
inline void* allocate(size_t bytes, size_t align) {
#ifdef UFAB_HUGE_PAGES
  if (alignment(bytes, align) == kHugePage) {
    const size_t n = rounded(bytes, align);
    void* const m = ::mmap(nullptr, n + kHugePage, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED) throw std::bad_alloc();
    const auto base = reinterpret_cast<uintptr_t>(m);
    const uintptr_t at = (base + kHugePage - 1) & ~uintptr_t{kHugePage - 1};
    if (at != base) (void)::munmap(m, at - base);  // the unaligned head and tail go back
    if (const uintptr_t end = base + n + kHugePage; end != at + n)
      (void)::munmap(reinterpret_cast<void*>(at + n), end - at - n);
    (void)::madvise(reinterpret_cast<void*>(at), n, MADV_HUGEPAGE);  // a hint: failure is harmless
    return reinterpret_cast<void*>(at);
  }
#endif
  return ::operator new(bytes, std::align_val_t{align});
}
inline void release(void* p, size_t bytes, size_t align) noexcept {
  if (p == nullptr) return;
#ifdef UFAB_HUGE_PAGES
  if (alignment(bytes, align) == kHugePage) {
    (void)::munmap(p, rounded(bytes, align));
    return;
  }
#endif
  ::operator delete(p, std::align_val_t{align});
}

// A std::allocator for containers of per-pair records (std::vector):
// the same rule per allocation.
template <typename T>
struct Allocator {
  using value_type = T;
  Allocator() = default;
  template <typename U>
  constexpr Allocator(const Allocator<U>&) noexcept {}
  T* allocate(size_t n) { return static_cast<T*>(huge_pages::allocate(n * sizeof(T), alignof(T))); }
  void deallocate(T* p, size_t n) noexcept { release(p, n * sizeof(T), alignof(T)); }
  template <typename U>
  bool operator==(const Allocator<U>&) const noexcept {
    return true;
  }
};

}  // namespace ufab::huge_pages
