// `sim collective check` on hand-edited MSCCL-IR imports: a chunk range
// outside its buffer is an error naming the file, rank and node, not an
// out-of-range access or a data-check failure blamed on another chunk.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <functional>
#include <string>

#include "tests/common/run_sim.h"
#include "system/program/collective_writer.h"
#include "system/producers/msccl_import.h"
#include "tests/system/test_util.h"

namespace sim {
namespace {

using namespace sim::testing;
namespace fs = std::filesystem;

const std::string kRingXml = testdata("astrasim-custom-ring/custom_allreduce.xml");

class MscclDataRanges : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!fs::exists(kRingXml)) GTEST_SKIP() << "testdata absent: " << kRingXml;
    dir_ = fs::path(::testing::TempDir()) / ("msccl_ranges_" + std::to_string(::getpid()) + "_" +
                                            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    traces_ = import_msccl(load_msccl_ir(kRingXml), std::nullopt, std::nullopt).traces;
  }
  void TearDown() override { fs::remove_all(dir_); }

  // The first node of rank 1 of `type` that has attribute `key`.
  et::Node& first(et::NodeType type, const std::string& key) {
    for (et::Node& n : traces_[1].nodes) {
      if (n.type() != type) continue;
      for (const auto& a : n.attr()) {
        if (a.name() == key) return n;
      }
    }
    ADD_FAILURE() << "no node with " << key;
    return traces_[1].nodes[0];
  }
  // `sim collective check` on the (edited) import.
  SimRun check() {
    const std::string prefix = (dir_ / "ar").string();
    write_rank_ets(traces_, prefix);
    return run_sim("collective check " + prefix);
  }

  fs::path dir_;
  std::vector<EtTrace> traces_;
};

TEST_F(MscclDataRanges, UneditedImportPassesTheDataCheck) {
  const SimRun r = check();
  EXPECT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("data check passed"), std::string::npos) << r.output;
}

TEST_F(MscclDataRanges, ReceivePastTheOutputBufferIsNamed) {
  et::Node& recv = first(et::COMM_RECV_NODE, "msccl_dstoff");
  set_attr_int(recv, "msccl_dstoff", 1000);
  const SimRun r = check();
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find("rank 1 node " + std::to_string(recv.id()) + ": msccl_dstbuf 'i' msccl_dstoff 1000 with "
                          "msg_chunk_cnt 1 is outside buffer 'i' of 8 chunks"),
            std::string::npos)
      << r.output;
}

TEST_F(MscclDataRanges, NegativeSendOffsetIsNamed) {
  et::Node& send = first(et::COMM_SEND_NODE, "msccl_srcoff");
  set_attr_int(send, "msccl_srcoff", -3);
  const SimRun r = check();
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find("rank 1 node " + std::to_string(send.id()) + ": msccl_srcbuf "), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("msccl_srcoff -3 with msg_chunk_cnt 1 starts before its buffer"), std::string::npos)
      << r.output;
}

TEST_F(MscclDataRanges, ChunkCountReachingPastTheBufferIsNamed) {
  et::Node& comp = first(et::COMP_NODE, "msccl_srcoff");
  set_attr_int(comp, "msg_chunk_cnt", 1000000);
  const SimRun r = check();
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find("rank 1 node " + std::to_string(comp.id()) + ": "), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("with msg_chunk_cnt 1000000 is outside buffer"), std::string::npos) << r.output;
}

TEST_F(MscclDataRanges, ZeroChunkCountIsNamed) {
  et::Node& comp = first(et::COMP_NODE, "msccl_srcoff");
  set_attr_int(comp, "msg_chunk_cnt", -1);
  const SimRun r = check();
  EXPECT_EQ(r.code, 2) << r.output;
  // Refused as the ETs are loaded, naming the rank's file and the node.
  EXPECT_NE(r.output.find((dir_ / "ar.1.et").string() + ": node " + std::to_string(comp.id()) +
                          ": msg_chunk_cnt -1 is negative"),
            std::string::npos)
      << r.output;
}

}  // namespace
}  // namespace sim
