// Every native algorithm, for every type it implements, written as Chakra ETs
// (sim collective gen) and checked symbolically (sim collective check, data
// check included) on every group size from 2 to 33 and 1 to 3 chunks; all
// in-process, through the writer and checker APIs.
#include <gtest/gtest.h>

#include <memory>

#include "system/scenario/system_files.h"
#include "system/registry/algorithm_choices.h"
#include "core/error.h"
#include "system/registry/algorithm_registry.h"
#include "system/registry/collective_checker.h"
#include "system/registry/collective_tools.h"
#include "system/program/collective_writer.h"
#include "system/program/et_algorithm.h"
#include "system/config/system_config.h"

namespace sim {
namespace {

struct Param {
  const char* algorithm;  // with parameters
  bool all_reduce_only = false;  // e.g. halvingDoubling:order=nearest
};

class CheckEveryAlgorithm : public ::testing::TestWithParam<Param> {};

TEST_P(CheckEveryAlgorithm, PassesStructureAndDataCheckOnSizes2To33) {
  const std::string algorithm = GetParam().algorithm;
  const NativeAlgorithm* a = find_native_algorithm(algorithm.substr(0, algorithm.find(':')));
  ASSERT_NE(a, nullptr);
  const std::uint64_t bytes = (1 << 20) + 7;  // uneven everywhere
  for (CollectiveType type : a->types) {
    if (GetParam().all_reduce_only && type != CollectiveType::kAllReduce) continue;
    for (std::uint32_t n = 2; n <= 33; ++n) {
      for (std::uint32_t k = 1; k <= 3; ++k) {
        SCOPED_TRACE(algorithm + " " + collective_name(type) + " n=" + std::to_string(n) + " k=" + std::to_string(k));
        // The DAG exactly as the ETs hold it, without protobuf (fast); the
        // round trip through protobuf is checked below on some sizes.
        std::uint32_t chunks = k;
        const auto program = native_program(algorithm, type, n, chunks, bytes);
        auto algo = std::make_shared<const EtAlgorithm>(program_algorithm(*program, normalized(type), bytes));
        if (n % 8 == 3) {
          const auto traces = native_algorithm_ets(algorithm, type, n, k, bytes);
          const EtAlgorithm loaded = et_algorithm_from_traces(traces, "mem", std::nullopt);
          ASSERT_EQ(loaded.type, algo->type);
          ASSERT_EQ(loaded.strided_blocks, algo->strided_blocks);
          ASSERT_EQ(loaded.equal_parts, algo->equal_parts);
          ASSERT_EQ(loaded.written_size, algo->written_size);
          for (std::uint32_t r = 0; r < n; ++r) {
            const EtRankProgram &a = loaded.ranks[r], &b = algo->ranks[r];
            ASSERT_EQ(a.children, b.children);
            ASSERT_EQ(a.roots, b.roots);
            ASSERT_EQ(a.ops.size(), b.ops.size());
            for (std::size_t i = 0; i < a.ops.size(); ++i) {
              ASSERT_EQ(a.ops[i].kind, b.ops[i].kind);
              if (a.ops[i].kind != OpKind::kCompute) {
                ASSERT_EQ(a.ops[i].peer, b.ops[i].peer);
                ASSERT_EQ(a.ops[i].tag, b.ops[i].tag);
              }
              ASSERT_EQ(a.ops[i].bytes, b.ops[i].bytes);
              ASSERT_EQ(a.ops[i].chunk_idx, b.ops[i].chunk_idx);
              ASSERT_EQ(a.ops[i].chunk_cnt, b.ops[i].chunk_cnt);
              ASSERT_EQ(a.ops[i].total_chunks, b.ops[i].total_chunks);
            }
          }
        }
        AlgorithmCheck c;
        try {
          c = check_et_algorithm(algo, true, bytes);
        } catch (const SimError& e) {
          FAIL() << e.what();
        }
        EXPECT_EQ(c.ranks, n);
        if (type == CollectiveType::kAllToAll) {
          EXPECT_FALSE(c.data_checked);
        } else {
          EXPECT_TRUE(c.data_checked) << c.data_note;
          EXPECT_EQ(c.data_note.rfind("data check passed", 0), 0u) << c.data_note;
        }
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Native, CheckEveryAlgorithm,
                         ::testing::Values(Param{"ring"}, Param{"direct"}, Param{"direct:window=2"},
                                           Param{"halvingDoubling"}, Param{"halvingDoubling:order=farthest"},
                                           Param{"halvingDoubling:order=nearest", true}, Param{"doubleBinaryTree"},
                                           Param{"binaryTree"}, Param{"astrasimTree"}),
                         [](const ::testing::TestParamInfo<Param>& info) {
                           std::string s = info.param.algorithm;
                           for (char& ch : s) {
                             if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
                           }
                           return s;
                         });

}  // namespace
}  // namespace sim

namespace sim {
namespace {

TEST(AlgorithmRegistry, ChoicesParseAndUnknownNamesListTheKnownOnes) {
  const AlgorithmChoice c = parse_algorithm_choice("direct:window=4,chunks=2", CollectiveType::kAllToAll);
  ASSERT_NE(c.native, nullptr);
  EXPECT_EQ(c.native->name, "direct");
  EXPECT_EQ(c.params.at("window"), 4u);
  EXPECT_EQ(c.params.at("chunks"), 2u);
  try {
    parse_algorithm_choice("directt", CollectiveType::kAllReduce);
    ADD_FAILURE();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("not a native algorithm (ring, direct, halvingDoubling, doubleBinaryTree, "
                                         "binaryTree, astrasimTree, nccl)"),
              std::string::npos)
        << e.what();
  }
  EXPECT_THROW(parse_algorithm_choice("halvingDoubling", CollectiveType::kBroadcast), InputError);
  EXPECT_THROW(parse_algorithm_choice("halvingDoubling:order=sideways", CollectiveType::kAllReduce), InputError);
  // Nearest-first pieces are not contiguous for reduce-scatter / all-gather: refused when built.
  std::uint32_t chunks = 1;
  EXPECT_THROW(native_program("halvingDoubling:order=nearest", CollectiveType::kReduceScatter, 8, chunks, 1024),
               InputError);
  EXPECT_NO_THROW(native_program("halvingDoubling:order=nearest", CollectiveType::kAllReduce, 8, chunks, 1024));
  EXPECT_THROW(parse_algorithm_choice("ring:window=2", CollectiveType::kAllReduce), InputError);
  EXPECT_THROW(parse_algorithm_choice("direct:window=0", CollectiveType::kAllReduce), InputError);
  SystemConfig cfg;
  apply_collective_option(cfg, "allreduce=halvingDoubling");
  EXPECT_EQ(cfg.algorithms.at(CollectiveType::kAllReduce), "halvingDoubling");
  EXPECT_THROW(apply_collective_option(cfg, "allreduce=direct:speed=1"), InputError);
  const SystemConfig y = parse_system_config("collective:\n  algorithms:\n    all_to_all: direct:window=2\n", "s.yml");
  EXPECT_EQ(y.algorithms.at(CollectiveType::kAllToAll), "direct:window=2");
  EXPECT_THROW(parse_system_text("collective:\n  algorithms:\n    all_reduce: nosuch\n", "s.yml"), InputError);
}

// Two --collective options for one type: the later replaced the earlier without a word.
TEST(AlgorithmRegistry, OneCollectiveOptionPerType) {
  SystemConfig cfg = parse_system_config("collective:\n  algorithms:\n    all_reduce: direct\n", "s.yml");
  apply_collective_option(cfg, "allreduce=halvingDoubling");  // overrides the config's choice
  apply_collective_option(cfg, "allgather=direct");
  try {
    apply_collective_option(cfg, "allreduce=ring");
    FAIL() << "a second --collective for ALL_REDUCE was accepted";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()),
              "--collective allreduce=ring: --collective allreduce=halvingDoubling already chose ALL_REDUCE's "
              "algorithm: give one --collective per collective type");
  }
  EXPECT_EQ(cfg.algorithms.at(CollectiveType::kAllReduce), "halvingDoubling");
}

TEST(AlgorithmRegistry, EveryTypeHasADefaultAndGroupsDoNotShareAcrossMembers) {
  SystemConfig cfg;
  AlgorithmRegistry reg(cfg);
  auto a = std::make_shared<const std::vector<std::uint32_t>>(std::vector<std::uint32_t>{0, 1, 2, 3});
  auto b = std::make_shared<const std::vector<std::uint32_t>>(std::vector<std::uint32_t>{4, 5, 6, 7});
  auto a2 = std::make_shared<const std::vector<std::uint32_t>>(*a);
  for (int t = 0; t <= 9; ++t) {
    const auto type = static_cast<CollectiveType>(t);
    const auto p = reg.program_for(CollectiveRequest{type, 1 << 20, a, 1, std::nullopt});
    ASSERT_NE(p, nullptr) << collective_name(type);
    EXPECT_EQ(p->name(), default_algorithm(type));
  }
  const auto pa = reg.program_for(CollectiveRequest{CollectiveType::kAllReduce, 1 << 20, a, 1, std::nullopt});
  EXPECT_NE(pa, reg.program_for(CollectiveRequest{CollectiveType::kAllReduce, 1 << 20, b, 1, std::nullopt}));
  EXPECT_EQ(pa, reg.program_for(CollectiveRequest{CollectiveType::kAllReduce, 1 << 20, a2, 1, std::nullopt}));
  EXPECT_NE(pa, reg.program_for(CollectiveRequest{CollectiveType::kAllReduce, 1 << 20, a, 2, std::nullopt}));
}

}  // namespace
}  // namespace sim
