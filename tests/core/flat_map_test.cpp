#include "core/flat_map.h"

#include <gtest/gtest.h>

#include <map>
#include <random>

namespace sim {
namespace {

// A deliberately poor hash, so probe runs are long and deletion must shift entries.
struct Clustered {
  std::size_t operator()(std::uint64_t k) const noexcept { return k % 7; }
};

TEST(FlatMap, AgreesWithStdMapUnderRandomInsertsAndErases) {
  FlatMap<std::uint64_t, std::uint64_t, Clustered> flat(8);
  std::map<std::uint64_t, std::uint64_t> ref;
  std::mt19937_64 rng(42);
  for (int i = 0; i < 20000; ++i) {
    const std::uint64_t k = rng() % 200;
    switch (rng() % 4) {
      case 0:
      case 1:
        flat[k] = i;
        ref[k] = i;
        break;
      case 2:
        EXPECT_EQ(flat.erase(k), ref.erase(k) == 1);
        break;
      case 3:
        if (std::uint64_t* v = flat.find(k)) {
          ASSERT_TRUE(ref.count(k));
          flat.erase_at(v);
          ref.erase(k);
        } else {
          EXPECT_FALSE(ref.count(k));
        }
        break;
    }
    ASSERT_EQ(flat.size(), ref.size());
  }
  for (const auto& [k, v] : ref) {
    ASSERT_NE(flat.find(k), nullptr) << k;
    EXPECT_EQ(*flat.find(k), v);
  }
  std::size_t seen = 0;
  flat.for_each([&](std::uint64_t k, std::uint64_t v) {
    EXPECT_EQ(ref.at(k), v);
    ++seen;
  });
  EXPECT_EQ(seen, ref.size());
}

TEST(FlatMap, FindOrInsertDefaultConstructs) {
  FlatMap<std::uint64_t, int, Clustered> flat;
  EXPECT_EQ(flat.find_or_insert(5), 0);
  flat.find_or_insert(5) = 9;
  EXPECT_EQ(*flat.find(5), 9);
  EXPECT_EQ(flat.size(), 1u);
}

}  // namespace
}  // namespace sim
