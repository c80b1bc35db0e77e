// RankSetWriter: while a set is being written, and after a write that did not
// finish, no set of the prefix can be loaded; a finished write is exactly the
// new set.
#include "workload/et/rank_set_writer.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "tests/common/temp_folder.h"

namespace sim {
namespace {

namespace fs = std::filesystem;

EtTrace one_node(int rank) {
  EtTrace t;
  t.metadata.set_version("0.0.4");
  et::Node& n = t.nodes.emplace_back();
  n.set_id(1);
  n.set_name("rank" + std::to_string(rank));
  n.set_type(et::COMP_NODE);
  n.set_duration_micros(1);
  return t;
}

class RankSetWriterTest : public testing::TempFolderTest {
 protected:
  void write_set(const std::string& prefix, std::uint32_t ranks) {
    RankSetWriter w(prefix, ranks);
    for (std::uint32_t r = 0; r < ranks; ++r) w.write(r, one_node(static_cast<int>(r)));
    w.commit();
  }
  static std::string missing_rank_error(const std::string& prefix) {
    try {
      resolve_rank_files(prefix);
    } catch (const InputError& e) {
      return e.what();
    }
    return "loaded";
  }
};

TEST_F(RankSetWriterTest, NoSetLoadsWhileWritingNorAfterAnUnfinishedWrite) {
  const std::string prefix = path("wl/job");
  write_set(prefix, 8);
  ASSERT_EQ(resolve_rank_files(prefix).size(), 8u);
  {
    RankSetWriter w(prefix, 4);
    EXPECT_EQ(resolve_rank_files(prefix).size(), 8u) << "nothing touched before the first rank is written";
    w.write(0, one_node(0));
    w.write(2, one_node(2));
    // Interrupted here (a signal), the folder holds no rank 0: nothing runs.
    EXPECT_EQ(missing_rank_error(prefix), "missing rank 0 (expected " + prefix + ".0.et)");
  }  // never committed
  EXPECT_EQ(entries(dir_ / "wl"), std::vector<std::string>{});
  write_set(prefix, 4);
  EXPECT_EQ(resolve_rank_files(prefix).size(), 4u);
  EXPECT_EQ(read_et(prefix + ".3.et").nodes[0].name(), "rank3");
}

TEST_F(RankSetWriterTest, CommitRefusesASetWithARankMissing) {
  const std::string prefix = path("job");
  RankSetWriter w(prefix, 3);
  w.write(0, one_node(0));
  w.write(2, one_node(2));
  try {
    w.commit();
    FAIL() << "committed without rank 1";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()), prefix + ".1.et: rank 1 was never written");
  }
}

}  // namespace
}  // namespace sim
