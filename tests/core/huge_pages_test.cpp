// Tables backed by transparent huge pages (core/huge_pages.h): what is below
// 2 MiB comes from operator new, what is larger is aligned to a 2 MiB page
// (so the kernel can back it with whole huge pages), and vectors using the
// allocator behave as any vector through growth, copies and moves.
#include "core/huge_pages.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <numeric>
#include <vector>

#include "core/flat_map.h"
#include "core/index_pool.h"

namespace sim {
namespace {

TEST(HugePages, LargeTablesStartOnAHugePage) {
  for (const std::size_t bytes : {kHugePage, kHugePage + 1, 7 * kHugePage + 12345}) {
    void* p = allocate_table(bytes);
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(p) % kHugePage, 0u) << bytes;
    static_cast<char*>(p)[bytes - 1] = 1;  // the whole size is usable
    free_table(p, bytes);
  }
  void* small = allocate_table(4096);
  ASSERT_NE(small, nullptr);
  free_table(small, 4096);
}

// Zeroed tables (the analytical network's pair index): every byte reads 0,
// every byte is writable, with or without the huge-page hint, and a
// unique_ptr frees them with their size.
TEST(HugePages, ZeroedTablesReadZeroAndTakeWrites) {
  for (const bool huge : {false, true}) {
    for (const std::size_t bytes : {std::size_t{4096}, kHugePage + 4, 3 * kHugePage}) {
      std::unique_ptr<std::uint32_t[], ZeroedTableDeleter> t(
          static_cast<std::uint32_t*>(allocate_zeroed_table(bytes, huge)), ZeroedTableDeleter{bytes});
      const std::size_t n = bytes / sizeof(std::uint32_t);
      std::uint64_t sum = 0;
      for (std::size_t i = 0; i < n; i += 97) sum += t[i];
      EXPECT_EQ(sum + t[n - 1], 0u) << bytes << (huge ? " huge" : "");
      t[0] = 1;
      t[n - 1] = 7;
      EXPECT_EQ(t[0] + t[n - 1], 8u);
    }
  }
}

TEST(HugePages, VectorsGrowCopyAndMoveAsUsual) {
  std::vector<std::uint64_t, HugePageAllocator<std::uint64_t>> v;
  for (std::uint64_t i = 0; i < (std::uint64_t{1} << 20); ++i) v.push_back(i * 3);  // 8 MiB: past the threshold
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(v.data()) % kHugePage, 0u);
  auto copy = v;
  const auto moved = std::move(v);
  ASSERT_EQ(copy.size(), std::size_t{1} << 20);
  EXPECT_EQ(copy, moved);
  const std::uint64_t n = std::uint64_t{1} << 20;
  EXPECT_EQ(std::accumulate(copy.begin(), copy.end(), std::uint64_t{0}), 3 * (n - 1) * n / 2);
}

TEST(HugePages, TablesOfMillionsOfEntriesKeepEveryEntry) {
  FlatMap<std::uint64_t, std::uint64_t, Mix64Hash> map;
  IndexPool<std::uint64_t> pool;
  constexpr std::uint64_t kN = 1'500'000;
  for (std::uint64_t k = 0; k < kN; ++k) {
    map[k * 7919] = k;
    EXPECT_EQ(pool.alloc(k), k);
  }
  for (std::uint64_t k = 0; k < kN; k += 1009) {
    ASSERT_NE(map.find(k * 7919), nullptr);
    EXPECT_EQ(*map.find(k * 7919), k);
    EXPECT_EQ(pool[static_cast<std::uint32_t>(k)], k);
  }
  EXPECT_EQ(map.size(), kN);
}

}  // namespace
}  // namespace sim
