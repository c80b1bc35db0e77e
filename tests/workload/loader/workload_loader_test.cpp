#include "workload/loader/workload_loader.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "core/error.h"
#include "workload/et/et_io.h"
#include "tests/common/temp_folder.h"

namespace sim {
namespace {

namespace fs = std::filesystem;

std::vector<std::string> write_ranks(const fs::path& dir, int ranks, int broken_from) {
  fs::remove_all(dir);
  fs::create_directories(dir);
  std::vector<std::string> files;
  for (int r = 0; r < ranks; ++r) {
    EtTrace t;
    t.metadata.set_version("0.0.4");
    for (int i = 1; i <= 5 + r; ++i) {
      et::Node n;
      n.set_id(i);
      n.set_type(et::COMP_NODE);
      n.set_duration_micros(i);
      if (i > 1) n.add_data_deps(r >= broken_from ? 1000 : i - 1);
      t.nodes.push_back(n);
    }
    files.push_back((dir / ("w." + std::to_string(r) + ".et")).string());
    write_et(t, files.back());
  }
  return files;
}

// A fresh folder per test, removed afterwards.
class WorkloadLoader : public testing::TempFolderTest {};

TEST_F(WorkloadLoader, SameGraphsWhateverTheThreadCount) {
  const auto files = write_ranks(path("same"), 9, 99);
  const auto one = load_rank_graphs(files, {}, 1);
  const auto four = load_rank_graphs(files, {}, 4);
  ASSERT_EQ(one.size(), 9u);
  ASSERT_EQ(four.size(), 9u);
  for (std::size_t r = 0; r < one.size(); ++r) {
    EXPECT_EQ(one[r].rank(), static_cast<int>(r));
    EXPECT_EQ(four[r].rank(), static_cast<int>(r));
    EXPECT_EQ(one[r].size(), 5 + r);
    EXPECT_EQ(four[r].size(), 5 + r);
    EXPECT_EQ(four[r].path(), files[r]);
  }
}

TEST_F(WorkloadLoader, LowestFailingRankIsReported) {
  const auto files = write_ranks(path("err"), 8, 3);
  try {
    load_rank_graphs(files, {}, 4);
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("rank 3, node 2: data dependency on absent node 1000"), std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace sim
