// NcclDagProgram's packed store (runs of one block repeated) against the
// same ops kept one by one: every op, every parent list, and the ready lists
// at the start and after every finish (the engine's event order, and so exact
// times under ties, follows them) along several walk orders. The DAGs are
// NCCL-like pipelines (a window of loops in flight, a last loop of other
// bytes, switch ops) and random ones, periodic or not.
#include "system/collectives/nccl/programs/nccl_dag.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "network/topology.h"
#include "system/collectives/algorithm_context.h"
#include "system/collectives/nccl/nccl_algorithm.h"
#include "system/collectives/nccl/programs/nccl_p2p.h"
#include "system/collectives/nccl/programs/nccl_programs.h"
#include "../op_text.h"

namespace sim {
namespace {

using nccl::DagBuilder;
using nccl::NcclDagProgram;

constexpr std::uint32_t kNone = DagBuilder::kNone;

using testing::show;

// Walks both programs' ranks in the same order (`order`: 0 first ready
// first, 1 last ready first, 2 seeded random), comparing what each says.
void expect_same_walk(const CollectiveProgram& packed, const CollectiveProgram& plain, int order) {
  ASSERT_EQ(packed.group_size(), plain.group_size());
  std::mt19937_64 rng(order);
  for (std::uint32_t pos = 0; pos < plain.group_size(); ++pos) {
    ASSERT_EQ(packed.op_count(pos), plain.op_count(pos)) << "rank " << pos;
    for (OpRef k = 0; k < plain.op_count(pos); ++k) {
      ASSERT_EQ(show(packed.op(pos, k)), show(plain.op(pos, k))) << "rank " << pos << " op " << k;
      std::vector<OpRef> a, b;
      packed.parents(pos, k, a);
      plain.parents(pos, k, b);
      ASSERT_EQ(a, b) << "rank " << pos << " op " << k;
    }
    RankCursor ca, cb;
    std::vector<OpRef> ra, rb;
    packed.start(pos, ca, ra);
    plain.start(pos, cb, rb);
    ASSERT_EQ(ra, rb) << "rank " << pos << " at the start";
    std::vector<OpRef> ready = rb;
    std::uint64_t done = 0;
    while (!ready.empty()) {
      std::size_t at = order == 0 ? 0 : order == 1 ? ready.size() - 1 : rng() % ready.size();
      const OpRef k = ready[at];
      ready.erase(ready.begin() + static_cast<std::ptrdiff_t>(at));
      ra.clear();
      rb.clear();
      packed.finish(pos, k, ca, ra);
      plain.finish(pos, k, cb, rb);
      ASSERT_EQ(ra, rb) << "rank " << pos << " after op " << k;
      ready.insert(ready.end(), rb.begin(), rb.end());
      ++done;
    }
    EXPECT_EQ(done, plain.op_count(pos)) << "rank " << pos;
  }
}

// Builds the same ops twice, packed and one by one, with `add(builder)`.
template <class Add>
void expect_packed_as_plain(std::uint32_t ranks, const Add& add, std::uint64_t* stored = nullptr,
                            std::uint64_t* ops = nullptr) {
  DagBuilder a(ranks), b(ranks, false);
  add(a);
  add(b);
  const auto packed = a.build("packed");
  const auto plain = b.build("plain");
  for (int order = 0; order < 3; ++order) expect_same_walk(*packed, *plain, order);
  const auto& p = dynamic_cast<const NcclDagProgram&>(*packed);
  if (stored != nullptr) *stored = p.stored_ops();
  if (ops != nullptr) *ops = dynamic_cast<const NcclDagProgram&>(*plain).stored_ops();
  EXPECT_EQ(p.switches(), dynamic_cast<const NcclDagProgram&>(*plain).switches());
}

CollectiveOp op_of(OpKind kind, std::uint32_t peer, std::uint64_t bytes, std::uint64_t tag, std::uint32_t channel = 0) {
  CollectiveOp o;
  o.kind = kind;
  o.peer = peer;
  o.bytes = bytes;
  o.tag = tag;
  o.channel = static_cast<std::uint16_t>(channel);
  if (kind == OpKind::kCompute) o.duration = 1000;
  return o;
}

// NVLS-tree's loop as nccl_programs.cpp builds it, on `ranks` ranks of one
// node: a base delay, then per channel k loops of m switch uploads (the
// window's loop before too), the sum received after the upload, a
// multicast, m receives; the last loops carry a byte fewer.
void nvls_like(DagBuilder& b, std::uint32_t ranks, std::uint32_t channels, std::uint64_t k, std::uint32_t window,
               bool seal) {
  const std::uint32_t m = ranks;
  for (std::uint32_t x = 0; x < ranks; ++x) {
    const std::uint32_t base = b.add(x, op_of(OpKind::kCompute, 0, 0, 0), {});
    for (std::uint32_t c = 0; c < channels; ++c) {
      std::vector<std::uint32_t> contrib(k * m, kNone);
      for (std::uint64_t j = 0; j < k; ++j) {
        const std::uint64_t bytes = 4096 + (j < k / 3 ? 1 : 0);
        for (std::uint32_t i = 0; i < m; ++i) {
          CollectiveOp up = op_of(OpKind::kSwitchReduce, i, bytes, std::uint64_t{c} << 48 | j << 24 | i << 1, c);
          up.node = 1000 + c % 2;
          contrib[j * m + i] = b.add(x, up, {base, j >= window ? contrib[(j - window) * m + i] : kNone});
        }
        const std::uint32_t sum =
            b.add(x, op_of(OpKind::kRecv, kSwitchPeer, bytes, std::uint64_t{c} << 48 | j << 24 | x << 1),
                  {contrib[j * m + x]});
        CollectiveOp mc = op_of(OpKind::kMulticast, x, bytes, std::uint64_t{c} << 48 | j << 24 | x << 1 | 1, c);
        mc.node = 1000 + c % 2;
        b.add(x, mc, {sum});
        for (std::uint32_t i = 0; i < m; ++i) {
          b.add(x, op_of(OpKind::kRecv, kSwitchPeer, bytes, std::uint64_t{c} << 48 | j << 24 | i << 1 | 1),
                {contrib[j * m + i]});
        }
      }
    }
    if (seal) b.seal(x);
  }
}

TEST(NcclDagProgram, PackedPipelineIsTheOpsOneByOne) {
  for (const bool seal : {false, true}) {
    for (const std::uint32_t window : {1u, 2u, 4u}) {
      std::uint64_t stored = 0, ops = 0;
      expect_packed_as_plain(4, [&](DagBuilder& b) { nvls_like(b, 4, 3, 40, window, seal); }, &stored, &ops);
      // 4 ranks x 3 channels x 40 loops of 10 ops; a few loops of each
      // channel are kept (the first window's, the middle's, the last
      // window's, the bytes' change).
      EXPECT_EQ(ops, 4u * (1 + 3 * 40 * 10));
      EXPECT_LT(stored * 8, ops) << "window " << window << " seal " << seal;
    }
  }
}

// Random blocks repeated: parents a few blocks back or fixed ones before the
// run, tags moving by a stride per position, and the repeats broken at a
// random loop (other bytes, or a dependency that does not repeat).
TEST(NcclDagProgram, PackedRandomRepeatsAreTheOpsOneByOne) {
  int packed = 0;
  for (std::uint64_t seed = 1; seed <= 60; ++seed) {
    std::mt19937_64 rng(seed);
    const std::uint32_t ranks = 1 + rng() % 3;
    const std::uint32_t T = 1 + rng() % 16;
    const std::uint32_t K = 2 + rng() % 140;
    const std::uint32_t prefix = rng() % 5;
    const std::uint32_t broken = rng() % K;
    const bool other_bytes = rng() % 2;
    // The block: each op's kind, peer, and parents (distance back, or fixed: -1 - prefix index).
    struct Slot {
      OpKind kind;
      std::uint32_t peer;
      std::uint64_t stride;
      std::vector<std::int64_t> parents;
    };
    std::vector<Slot> block(T);
    for (std::uint32_t s = 0; s < T; ++s) {
      block[s].kind = static_cast<OpKind>(rng() % 3);
      block[s].peer = static_cast<std::uint32_t>(rng() % 3);
      block[s].stride = rng() % 2 ? std::uint64_t{1} << 24 : 0;
      const int np = static_cast<int>(rng() % 3);
      for (int q = 0; q < np; ++q) {
        if (prefix > 0 && rng() % 3 == 0) {
          block[s].parents.push_back(-1 - static_cast<std::int64_t>(rng() % prefix));
        } else {
          block[s].parents.push_back(1 + static_cast<std::int64_t>(rng() % (2 * T)));
        }
      }
    }
    const auto add = [&](DagBuilder& b) {
      for (std::uint32_t x = 0; x < ranks; ++x) {
        for (std::uint32_t p = 0; p < prefix; ++p) b.add(x, op_of(OpKind::kCompute, 0, p, 0), {p > 0 ? p - 1 : kNone});
        for (std::uint32_t j = 0; j < K; ++j) {
          for (std::uint32_t s = 0; s < T; ++s) {
            const std::uint32_t self = prefix + j * T + s;
            std::vector<std::uint32_t> parents;
            for (const std::int64_t d : block[s].parents) {
              if (d < 0) {
                parents.push_back(static_cast<std::uint32_t>(-1 - d));
              } else if (self >= prefix + d) {
                parents.push_back(self - static_cast<std::uint32_t>(d));
              }
            }
            if (j == broken && s == 0 && !other_bytes && self > 0) parents.push_back(0);
            const std::uint64_t bytes = 64 + s + (j == broken && other_bytes ? 1 : 0);
            b.add(x, op_of(block[s].kind, block[s].peer, bytes, j * block[s].stride + s + x), parents);
          }
        }
      }
    };
    SCOPED_TRACE("seed " + std::to_string(seed));
    std::uint64_t stored = 0, ops = 0;
    expect_packed_as_plain(ranks, add, &stored, &ops);
    if (stored < ops) ++packed;
  }
  EXPECT_GE(packed, 20);  // most are long enough to pack (256 ops a rank at least)
}

TEST(NcclDagProgram, OpsThatDoNotRepeatStayOneByOne) {
  std::uint64_t stored = 0, ops = 0;
  expect_packed_as_plain(2, [](DagBuilder& b) {
    std::mt19937_64 rng(7);
    for (std::uint32_t x = 0; x < 2; ++x) {
      for (std::uint32_t k = 0; k < 600; ++k) {
        std::vector<std::uint32_t> parents;
        for (int q = 0; q < 2 && k > 0; ++q) parents.push_back(static_cast<std::uint32_t>(rng() % k));
        std::sort(parents.begin(), parents.end());
        parents.erase(std::unique(parents.begin(), parents.end()), parents.end());
        b.add(x, op_of(OpKind::kSend, static_cast<std::uint32_t>(rng() % 5), rng() % 1000, k), parents);
      }
    }
  }, &stored, &ops);
  EXPECT_EQ(stored, ops);
}

TEST(NcclDagProgram, NoOpAfterSeal) {
  DagBuilder b(2);
  b.add(0, op_of(OpKind::kCompute, 0, 0, 0), {});
  b.seal(0);
  EXPECT_THROW(b.add(0, op_of(OpKind::kCompute, 0, 0, 0), {}), std::logic_error);
  b.add(1, op_of(OpKind::kCompute, 0, 0, 0), {});
}

// NCCL's NVLS-tree as built for 4 nodes of 8 GPUs, 1 GiB on 16 channels:
// every rank holds a few loops of ops, not its thousands.
TEST(NcclDagProgram, NvlsTreeHoldsAFewLoops) {
  AlgorithmContext ctx;
  auto members = std::make_shared<std::vector<std::uint32_t>>();
  for (std::uint32_t p = 0; p < 32; ++p) {
    members->push_back(p);
    ctx.domain_of.push_back(p / 8);
    ctx.rail_of.push_back(p % 8);
  }
  ctx.members = members;
  ctx.domains = 4;
  for (NodeId d = 0; d < 4; ++d) ctx.domain_switch.push_back(100 + d);
  ctx.domain_reduces = true;
  nccl::StepModel m;
  m.channels = 16;
  m.window = 4;
  const auto program = nccl::make_nvls_tree_program("nvlstree", std::uint64_t{1} << 30, ctx, m);
  const auto& dag = dynamic_cast<const NcclDagProgram&>(*program);
  std::uint64_t ops = 0;
  for (std::uint32_t p = 0; p < 32; ++p) ops += dag.op_count(p);
  EXPECT_GT(ops, 32u * 16 * 60 * 20);  // 64 loops a channel of about 24 ops
  EXPECT_LT(dag.stored_ops() * 20, ops);
}

// NCCL's own programs, each built packed and again one by one, on a fabric
// whose every level reduces (4 GPUs a node, 2 nodes a leaf, 2 leaves), so
// that every algorithm can run: the same ops, parents and ready lists.
TEST(NcclDagProgram, EveryNcclProgramPackedIsItsOpsOneByOne) {
  const Topology topo = parse_topology(
      "topology: [Switch, Switch, Switch]\nnpus_count: [4, 2, 2]\nbandwidth: [450, 50, 50]\n"
      "latency: [150, 700, 700]\nin_network_reduction: [true, true, true]\n",
      "leaf-spine");
  std::vector<std::uint32_t> all(16), two_rails;
  for (std::uint32_t p = 0; p < 16; ++p) all[p] = p;
  for (std::uint32_t node = 0; node < 4; ++node) two_rails.insert(two_rails.end(), {4 * node, 4 * node + 1});
  struct Case {
    CollectiveType type;
    const char* algo;
    const std::vector<std::uint32_t>* members;
  };
  const std::vector<Case> cases = {
      {CollectiveType::kAllReduce, "tree", &all},          {CollectiveType::kAllReduce, "nvlstree", &all},
      {CollectiveType::kAllReduce, "collnetchain", &all},  {CollectiveType::kAllReduce, "collnetdirect", &all},
      {CollectiveType::kAllReduce, "collnetdirect", &two_rails},
      {CollectiveType::kAllReduce, "nvls", &all},          {CollectiveType::kBroadcast, "ring", &all},
      {CollectiveType::kReduce, "ring", &two_rails},
  };
  const std::uint64_t bytes = 64 << 20;
  const auto build = [&](const Case& c, const AlgorithmContext& ctx) -> std::shared_ptr<const CollectiveProgram> {
    const nccl::Params params = {{"algo", nccl::param_value("algo", c.algo)}, {"channels", 2}};
    const nccl::Plan pl = nccl::plan(c.type, bytes, params, ctx);
    switch (pl.algo) {
      case nccl::Algo::kTree: return nccl::make_tree_program(pl.name, bytes, ctx, pl.model);
      case nccl::Algo::kNvls: return nccl::make_nvls_program(pl.name, bytes, ctx, pl.model);
      case nccl::Algo::kNvlsTree: return nccl::make_nvls_tree_program(pl.name, bytes, ctx, pl.model);
      case nccl::Algo::kCollNetChain: return nccl::make_collnet_chain_program(pl.name, bytes, ctx, pl.model);
      case nccl::Algo::kCollNetDirect: return nccl::make_collnet_direct_program(pl.name, bytes, ctx, pl.model);
      default: return nccl::make_chain_program(pl.name, c.type, bytes, ctx, pl.model);
    }
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(std::string(c.algo) + " on " + std::to_string(c.members->size()) + " ranks");
    const auto ctx =
        make_algorithm_context(std::make_shared<std::vector<std::uint32_t>>(*c.members), &topo);
    const auto packed = build(c, *ctx);
    std::shared_ptr<const CollectiveProgram> plain;
    {
      const nccl::DagPackingOff off;
      plain = build(c, *ctx);
    }
    expect_same_walk(*packed, *plain, 2);
    const auto stored = dynamic_cast<const NcclDagProgram&>(*packed).stored_ops();
    const auto ops = dynamic_cast<const NcclDagProgram&>(*plain).stored_ops();
    EXPECT_LT(stored * 4, ops);  // packed: a few loops a channel kept
  }
  // NVLS's all-gather and reduce-scatter on one node, the ring as a DAG, and all-to-all (whose
  // peers differ op by op: they may stay one by one, and must say the same either way).
  const auto node = make_algorithm_context(std::make_shared<std::vector<std::uint32_t>>(
                                               std::vector<std::uint32_t>{0, 1, 2, 3}), &topo);
  nccl::StepModel m;
  m.channels = 2;
  const auto more = [&] {
    return std::vector<std::shared_ptr<const CollectiveProgram>>{
        nccl::make_nvls_scatter_gather_program("ag", CollectiveType::kAllGather, bytes, *node, m),
        nccl::make_nvls_scatter_gather_program("rs", CollectiveType::kReduceScatter, bytes, *node, m),
        nccl::make_ring_dag_program("ring", CollectiveType::kAllReduce, bytes,
                                    *make_algorithm_context(std::make_shared<std::vector<std::uint32_t>>(all), &topo), m),
        nccl::make_alltoall_program("a2a", bytes,
                                    *make_algorithm_context(std::make_shared<std::vector<std::uint32_t>>(all), &topo),
                                    nccl::P2pModel{})};
  };
  const auto packed = more();
  std::vector<std::shared_ptr<const CollectiveProgram>> plain;
  {
    const nccl::DagPackingOff off;
    plain = more();
  }
  for (std::size_t i = 0; i < packed.size(); ++i) {
    SCOPED_TRACE(packed[i]->name());
    expect_same_walk(*packed[i], *plain[i], 1);
  }
}

}  // namespace
}  // namespace sim
