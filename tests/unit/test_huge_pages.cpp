// sched/huge_pages.hpp: the blocks behind the data path's per-pair arrays.
// Large blocks (>= 1 MiB) are 2 MiB aligned, whole huge pages, and usable
// to their last byte; small ones come from operator new at their own
// alignment; std::vector works on the allocator. Where the kernel offers
// transparent huge pages (madvise or always), a large block touched after
// allocate() is backed by them (/proc/self/smaps); elsewhere that case
// skips with the reason.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "sched/huge_pages.hpp"

using namespace ufab;

namespace {

constexpr size_t kMiB = size_t{1} << 20;

bool aligned(const void* p, size_t a) { return (reinterpret_cast<uintptr_t>(p) & (a - 1)) == 0; }

// AnonHugePages (kB) of the mapping that holds p, from /proc/self/smaps; -1 if not found.
long anon_huge_kb(const void* p) {
  std::ifstream f("/proc/self/smaps");
  std::string line;
  bool in = false;
  const auto a = reinterpret_cast<uintptr_t>(p);
  while (std::getline(f, line)) {
    uintptr_t lo = 0, hi = 0;
    char dash = 0;
    std::istringstream head(line);
    if (head >> std::hex >> lo >> dash >> hi && dash == '-') {
      in = a >= lo && a < hi;
      continue;
    }
    if (in && line.rfind("AnonHugePages:", 0) == 0) return std::stol(line.substr(14));
  }
  return -1;
}

// The kernel's THP mode: the bracketed word of .../transparent_hugepage/enabled.
std::string thp_mode() {
  std::ifstream f("/sys/kernel/mm/transparent_hugepage/enabled");
  std::string s;
  std::getline(f, s);
  const size_t a = s.find('['), b = s.find(']');
  return a == std::string::npos || b == std::string::npos ? "" : s.substr(a + 1, b - a - 1);
}

}  // namespace

TEST(HugePages, LargeBlocksAreHugeAlignedAndWhole) {
  EXPECT_EQ(huge_pages::alignment(kMiB - 1, 64), 64u);
  EXPECT_EQ(huge_pages::rounded(kMiB - 1, 64), kMiB - 1);
#ifdef UFAB_HUGE_PAGES
  EXPECT_EQ(huge_pages::alignment(kMiB, 64), huge_pages::kHugePage);
  EXPECT_EQ(huge_pages::rounded(kMiB, 64), huge_pages::kHugePage);
  EXPECT_EQ(huge_pages::rounded(5 * kMiB, 64), 6 * kMiB);
  EXPECT_EQ(huge_pages::rounded(4 * kMiB, 64), 4 * kMiB);
#endif
  for (const size_t bytes : {size_t{3000}, kMiB - 64, kMiB, 5 * kMiB + 7}) {
    void* p = huge_pages::allocate(bytes, 64);
    ASSERT_NE(p, nullptr);
    EXPECT_TRUE(aligned(p, huge_pages::alignment(bytes, 64))) << bytes;
    std::memset(p, 0xa5, bytes);  // every byte is usable
    EXPECT_EQ(static_cast<unsigned char*>(p)[bytes - 1], 0xa5);
    huge_pages::release(p, bytes, 64);
  }
}

TEST(HugePages, VectorOnTheAllocatorGrowsAndKeepsItsValues) {
  std::vector<uint64_t, huge_pages::Allocator<uint64_t>> v;
  for (uint64_t i = 0; i < 600'000; ++i) v.push_back(i * 3);  // 4.8 MB: several reallocations, the last ones huge
  EXPECT_TRUE(aligned(v.data(), huge_pages::alignment(v.capacity() * sizeof(uint64_t), alignof(uint64_t))));
  uint64_t bad = 0;
  for (uint64_t i = 0; i < v.size(); ++i) bad += v[i] != i * 3;
  EXPECT_EQ(bad, 0u);
}

TEST(HugePages, TouchedLargeBlockIsBackedByHugePages) {
#ifndef UFAB_HUGE_PAGES
  GTEST_SKIP() << "no madvise on this platform";
#else
  const std::string mode = thp_mode();
  if (mode.empty())
    GTEST_SKIP() << "this kernel has no transparent huge pages (/sys/kernel/mm/transparent_hugepage/enabled absent)";
  if (mode != "madvise" && mode != "always")
    GTEST_SKIP() << "transparent huge pages are '" << mode << "' here (/sys/kernel/mm/transparent_hugepage/enabled)";
  const size_t bytes = 8 * kMiB;
  void* p = huge_pages::allocate(bytes, 64);
  std::memset(p, 1, bytes);
  const long kb = anon_huge_kb(p);
  huge_pages::release(p, bytes, 64);
  ASSERT_GE(kb, 0) << "the block's mapping is not in /proc/self/smaps";
  // The kernel may lack a free 2 MiB page for some of the four, not for
  // all of them on a machine with memory to spare.
  EXPECT_GE(kb, 2048) << "THP mode " << mode;
#endif
}
