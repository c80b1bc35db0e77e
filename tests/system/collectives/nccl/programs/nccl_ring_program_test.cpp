// NCCL's ring computed on demand (NcclRingProgram) against the same ring
// built op by op (make_ring_dag_program): for many groups, collectives and
// step models, every op, every parent list, the ready lists at the start and
// after every finish (the engine's event order, and so exact times under
// ties, follows them) along several walk orders, and the answers on rank
// symmetry must be the same.
#include "system/collectives/nccl/programs/nccl_ring_program.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "system/collectives/algorithm_context.h"
#include "system/collectives/nccl/programs/nccl_programs.h"
#include "../op_text.h"
#include "system/collectives/nccl/model/nccl_protocol.h"

namespace sim {
namespace {

using nccl::Proto;
using nccl::StepModel;

// n GPUs, `per_node` a node. Blocked: node of p is p / per_node (the last
// node may have fewer); interleaved: p % nodes, so ring neighbours by
// position sit on different nodes. Rails run backwards within a node, so
// the rings' order (by rail) is not the positions'.
AlgorithmContext group(std::uint32_t n, std::uint32_t per_node, bool interleaved) {
  AlgorithmContext ctx;
  auto members = std::make_shared<std::vector<std::uint32_t>>();
  for (std::uint32_t p = 0; p < n; ++p) members->push_back(p);
  ctx.members = members;
  const std::uint32_t nodes = (n + per_node - 1) / per_node;
  ctx.domains = nodes;
  for (std::uint32_t p = 0; p < n; ++p) {
    const std::uint32_t node = interleaved ? p % nodes : p / per_node;
    const std::uint32_t local = interleaved ? p / nodes : p % per_node;
    ctx.domain_of.push_back(node);
    ctx.rail_of.push_back(per_node - 1 - local);
  }
  ctx.domain_switch.assign(nodes, kNoSwitch);
  return ctx;
}

using testing::show;

bool same(const CollectiveOp& a, const CollectiveOp& b) {
  return a.kind == b.kind && a.peer == b.peer && a.bytes == b.bytes && a.tag == b.tag && a.duration == b.duration &&
         a.channel == b.channel && a.rate == b.rate && a.node == b.node && a.proxy_ns == b.proxy_ns;
}

std::string show(const std::vector<OpRef>& v) {
  std::ostringstream s;
  s << "[";
  for (std::size_t i = 0; i < v.size() && i < 12; ++i) s << (i ? " " : "") << v[i];
  if (v.size() > 12) s << " ... (" << v.size() << ")";
  s << "]";
  return s.str();
}

enum class Order { kFifo, kLifo, kMixed };

// Runs rank `pos` of both programs, finishing ready ops in `order`; the ready
// lists each finish gives must be the same. Returns a failure, or "".
std::string walk(const CollectiveProgram& dag, const CollectiveProgram& ring, std::uint32_t pos, Order order) {
  RankCursor ca, cb;
  std::vector<OpRef> ra, rb;
  dag.start(pos, ca, ra);
  ring.start(pos, cb, rb);
  if (ra != rb) return "start: " + show(ra) + " vs " + show(rb);
  std::vector<OpRef> ready = ra;
  std::size_t head = 0;  // FIFO: ready[head..] waits
  std::uint64_t done = 0, lcg = 12345 + pos;
  while (head < ready.size()) {
    OpRef ref;
    if (order == Order::kFifo) {
      ref = ready[head++];
    } else if (order == Order::kLifo) {
      ref = ready.back();
      ready.pop_back();
    } else {
      lcg = lcg * 6364136223846793005ULL + 1442695040888963407ULL;
      const std::size_t i = head + (lcg >> 33) % (ready.size() - head);
      ref = ready[i];
      ready[i] = ready.back();
      ready.pop_back();
    }
    ra.clear();
    rb.clear();
    dag.finish(pos, ref, ca, ra);
    ring.finish(pos, ref, cb, rb);
    if (ra != rb) return "finish " + std::to_string(ref) + ": " + show(ra) + " vs " + show(rb);
    ready.insert(ready.end(), ra.begin(), ra.end());
    ++done;
  }
  if (done != dag.op_count(pos)) return "walk finished " + std::to_string(done) + " ops";
  return "";
}

// Everything the engine and the tools ask, on every rank.
std::string compare(const CollectiveProgram& dag, const CollectiveProgram& ring) {
  if (dag.name() != ring.name()) return "name";
  if (dag.group_size() != ring.group_size()) return "group size";
  if (dag.ref_bits() != ring.ref_bits()) return "ref bits";
  if (dag.rank_symmetric() != ring.rank_symmetric()) {
    return std::string("rank symmetric: dag ") + (dag.rank_symmetric() ? "yes" : "no");
  }
  const std::uint32_t n = dag.group_size();
  std::vector<OpRef> pa, pb;
  for (std::uint32_t pos = 0; pos < n; ++pos) {
    const std::string at = "rank " + std::to_string(pos) + ": ";
    if (dag.op_count(pos) != ring.op_count(pos)) {
      return at + "op count " + std::to_string(dag.op_count(pos)) + " vs " + std::to_string(ring.op_count(pos));
    }
    for (OpRef ref = 0; ref < dag.op_count(pos); ++ref) {
      const CollectiveOp a = dag.op(pos, ref), b = ring.op(pos, ref);
      if (!same(a, b)) return at + "op " + std::to_string(ref) + ": " + show(a) + " vs " + show(b);
      pa.clear();
      pb.clear();
      dag.parents(pos, ref, pa);
      ring.parents(pos, ref, pb);
      if (pa != pb) return at + "parents of " + std::to_string(ref) + ": " + show(pa) + " vs " + show(pb);
    }
    for (const Order o : {Order::kFifo, Order::kLifo, Order::kMixed}) {
      const std::string failed = walk(dag, ring, pos, o);
      if (!failed.empty()) return at + "walk " + std::to_string(static_cast<int>(o)) + ": " + failed;
    }
  }
  if (dag.rank_symmetric()) {
    std::vector<std::uint32_t> peers = {0, n};  // not peers of the origin: unchanged
    for (OpRef ref = 0; ref < dag.op_count(0); ++ref) {
      const CollectiveOp op = dag.op(0, ref);
      if (op.kind == OpKind::kSend || op.kind == OpKind::kRecv) peers.push_back(op.peer);
      if (dag.matched_send(ref) != ring.matched_send(ref)) return "matched send of " + std::to_string(ref);
    }
    for (std::uint32_t pos = 0; pos < n; ++pos) {
      for (const std::uint32_t peer : peers) {
        if (dag.symmetric_peer(pos, peer) != ring.symmetric_peer(pos, peer)) {
          return "symmetric peer of " + std::to_string(peer) + " on rank " + std::to_string(pos);
        }
      }
    }
  }
  return "";
}

struct Layout {
  std::uint32_t n, per_node;
  bool interleaved;
};

const Layout kLayouts[] = {{2, 8, false},  {2, 1, false},  {3, 8, false},  {3, 1, false}, {3, 2, false},
                           {8, 8, false},  {8, 4, false},  {8, 1, false},  {8, 4, true},  {8, 3, false},
                           {16, 8, false}, {16, 4, false}, {16, 1, false}, {16, 8, true}, {16, 4, true}};
const CollectiveType kTypes[] = {CollectiveType::kAllReduce, CollectiveType::kReduceScatter,
                                 CollectiveType::kAllGather};
const Proto kProtos[] = {Proto::kSimple, Proto::kLL, Proto::kLL128};

const char* type_name(CollectiveType t) {
  return t == CollectiveType::kAllReduce       ? "allreduce"
         : t == CollectiveType::kReduceScatter ? "reducescatter"
                                               : "allgather";
}

struct RingCase {
  CollectiveType type;
  Layout layout;
  std::uint64_t bytes;
  StepModel m;
  std::string describe() const {
    std::ostringstream s;
    s << type_name(type) << " n=" << layout.n << " per_node=" << layout.per_node
      << (layout.interleaved ? " interleaved" : "") << " bytes=" << bytes << " proto=" << static_cast<int>(m.proto)
      << " channels=" << m.channels << " step=" << m.step_bytes << " window=" << m.window << " base=" << m.base
      << " hop=" << m.hop_intra << "/" << m.hop_inter << " rate=" << m.channel_rate << " memory=" << m.memory_bandwidth
      << " proxy=" << m.proxy << " intra rate=" << m.intra_rate;
    return s.str();
  }
};

struct Tally {
  int cases = 0, symmetric = 0;
};

void check(const RingCase& c, Tally& tally) {
  const AlgorithmContext ctx = group(c.layout.n, c.layout.per_node, c.layout.interleaved);
  const auto dag = nccl::make_ring_dag_program("nccl:ring", c.type, c.bytes, ctx, c.m);
  const auto ring = nccl::make_ring_program("nccl:ring", c.type, c.bytes, ctx, c.m);
  ASSERT_NE(dynamic_cast<const nccl::NcclRingProgram*>(ring.get()), nullptr);
  const std::string failed = compare(*dag, *ring);
  EXPECT_EQ(failed, "") << c.describe();
  ++tally.cases;
  if (dag->rank_symmetric()) ++tally.symmetric;
}

// Bytes that give: nothing; fewer than the ranks; even (a multiple of n);
// uneven; and, with a small step, chunks beyond the window.
std::vector<std::uint64_t> sizes(std::uint32_t n) {
  return {0, 1, n - 1u, 48u * n, 48u * n + 5, 1000u * n + 3, 1u << 16, (1u << 16) + 7};
}

TEST(NcclRingProgram, IsTheDagOpForOp) {
  Tally tally;
  std::uint64_t variant = 0;
  for (const CollectiveType type : kTypes) {
    for (const Layout& layout : kLayouts) {
      for (const Proto proto : kProtos) {
        for (const std::uint64_t bytes : sizes(layout.n)) {
          const std::uint64_t v = variant++;
          StepModel m;
          m.proto = proto;
          const std::uint32_t channel_choices[] = {1, 2, 3, 4, 16, 17};
          m.channels = channel_choices[v % 6];
          // Small steps: several chunks per channel, more than the window with few channels.
          const std::uint64_t step_choices[] = {0, 64, 7, 512, 1};
          m.step_bytes = step_choices[(v / 2) % 5];
          if (m.channels >= 16 && m.step_bytes > 0 && m.step_bytes < 64) m.step_bytes = 2048;
          m.window = (v / 3) % 3 == 0 ? 0 : static_cast<std::uint32_t>(1 + (v / 5) % 3);
          m.base = (v / 7) % 2 ? 3 * kMicrosecond : 0;
          const Time hops[][2] = {{0, 0}, {500, 0}, {0, 700}, {500, 700}, {600, 600}};
          m.hop_intra = hops[(v / 11) % 5][0];
          m.hop_inter = hops[(v / 11) % 5][1];
          m.channel_rate = (v / 13) % 3 == 0 ? 0 : 20'000'000'000;
          m.memory_bandwidth = (v / 17) % 2 ? 3'000'000'000'000 : 0;
          m.proxy = (v / 19) % 2 ? 2500 : 0;
          m.intra_rate = (v / 23) % 2 ? 36'700'000'000 : 0;
          check({type, layout, bytes, m}, tally);
        }
      }
    }
  }
  // Both answers on symmetry came up.
  EXPECT_GT(tally.symmetric, 0);
  EXPECT_LT(tally.symmetric, tally.cases);
}

// Every hop and cost combination on a few groups, where the delays' presence
// (a zero hop, a reduce-scatter's read of a one-byte piece) varies by rank,
// channel and chunk.
TEST(NcclRingProgram, DelaysComeAndGoAsTheDagsDo) {
  Tally tally;
  const Layout layouts[] = {{8, 4, false}, {8, 8, false}, {3, 1, false}, {16, 4, true}};
  const Time hops[][2] = {{0, 0}, {500, 0}, {0, 700}, {500, 700}, {600, 600}};
  for (const CollectiveType type : kTypes) {
    for (const Layout& layout : layouts) {
      for (const auto& hop : hops) {
        for (int costs = 0; costs < 8; ++costs) {
          for (const std::uint64_t bytes : {std::uint64_t{5} * layout.n + 3, std::uint64_t{64} * layout.n}) {
            StepModel m;
            m.proto = costs % 3 == 0 ? Proto::kLL128 : costs % 3 == 1 ? Proto::kSimple : Proto::kLL;
            m.channels = costs % 2 ? 2 : 3;
            m.step_bytes = 1;
            m.window = 2;
            m.base = costs & 4 ? 1000 : 0;
            m.hop_intra = hop[0];
            m.hop_inter = hop[1];
            m.channel_rate = costs & 1 ? 10'000'000'000 : 0;
            m.memory_bandwidth = costs & 2 ? 1'000'000'000 : 0;
            m.proxy = costs & 4 ? 1000 : 0;
            m.intra_rate = costs & 2 ? 30'000'000'000 : 0;
            check({type, layout, bytes, m}, tally);
          }
        }
      }
    }
  }
  EXPECT_GT(tally.symmetric, 0);
}

// Many chunks (the loop cap) on many channels, NCCL's own step sizes.
TEST(NcclRingProgram, LargeBuffersAsTheDag) {
  Tally tally;
  for (const CollectiveType type : kTypes) {
    for (const Layout& layout : {Layout{16, 8, false}, Layout{8, 4, true}}) {
      for (const Proto proto : kProtos) {
        StepModel m;
        m.proto = proto;
        m.channels = 16;
        m.base = 5 * kMicrosecond;
        m.hop_intra = 600 * kNanosecond;
        m.hop_inter = 5 * kMicrosecond;
        m.channel_rate = 25'000'000'000;
        m.memory_bandwidth = 3'350'000'000'000;
        m.proxy = 1500 * kNanosecond / 1000;
        check({type, layout, std::uint64_t{1} << 28, m}, tally);
        m.intra_rate = 36'700'000'000;
        check({type, layout, std::uint64_t{1} << 28, m}, tally);
      }
    }
  }
}

TEST(NcclRingProgram, OneRankHasNoOps) {
  Tally tally;
  StepModel m;
  m.base = 1000;
  for (const CollectiveType type : kTypes) check({type, Layout{1, 8, false}, 4096, m}, tally);
}

TEST(NcclRingProgram, RefusesOtherCollectives) {
  const AlgorithmContext ctx = group(4, 4, false);
  EXPECT_THROW(nccl::make_ring_program("r", CollectiveType::kBroadcast, 64, ctx, StepModel{}), std::invalid_argument);
}


// A ring over two nodes crosses the network at two positions of sixteen:
// with the hops' latencies alike, only the proxy's time on those sends tells
// the positions apart, and with a proxy the ring is not rank-symmetric.
TEST(NcclRingProgram, AProxyOnSomePositionsOnlyIsNotSymmetric) {
  const AlgorithmContext ctx = group(16, 8, false);
  StepModel m;
  m.channels = 1;
  m.hop_intra = m.hop_inter = 600;
  const auto plain = nccl::make_ring_program("nccl:ring", CollectiveType::kAllGather, 48 * 16, ctx, m);
  const auto dag_plain = nccl::make_ring_dag_program("nccl:ring", CollectiveType::kAllGather, 48 * 16, ctx, m);
  EXPECT_TRUE(plain->rank_symmetric());
  EXPECT_TRUE(dag_plain->rank_symmetric());
  m.proxy = 2500;
  const auto proxied = nccl::make_ring_program("nccl:ring", CollectiveType::kAllGather, 48 * 16, ctx, m);
  const auto dag_proxied = nccl::make_ring_dag_program("nccl:ring", CollectiveType::kAllGather, 48 * 16, ctx, m);
  EXPECT_FALSE(proxied->rank_symmetric());
  EXPECT_FALSE(dag_proxied->rank_symmetric());
}

// Two paces, NVLink's and the network's, tell the positions apart as the
// proxy does: a ring over two nodes with them is not rank-symmetric, and each
// send takes the pace of the link it crosses.
TEST(NcclRingProgram, TwoPacesOnSomePositionsOnlyAreNotSymmetric) {
  const AlgorithmContext ctx = group(16, 8, false);
  StepModel m;
  m.channels = 1;
  m.hop_intra = m.hop_inter = 600;
  m.channel_rate = 10'000'000'000;
  m.intra_rate = m.channel_rate;
  const auto one = nccl::make_ring_program("nccl:ring", CollectiveType::kAllGather, 48 * 16, ctx, m);
  EXPECT_TRUE(one->rank_symmetric());
  m.intra_rate = 30'000'000'000;
  const auto two = nccl::make_ring_program("nccl:ring", CollectiveType::kAllGather, 48 * 16, ctx, m);
  const auto dag = nccl::make_ring_dag_program("nccl:ring", CollectiveType::kAllGather, 48 * 16, ctx, m);
  EXPECT_FALSE(two->rank_symmetric());
  EXPECT_FALSE(dag->rank_symmetric());
  std::set<BytesPerSecond> inside, across;
  for (std::uint32_t pos = 0; pos < 16; ++pos) {
    for (OpRef ref = 0; ref < two->op_count(pos); ++ref) {
      const CollectiveOp op = two->op(pos, ref);
      if (op.kind != OpKind::kSend) continue;
      (ctx.domain_of[pos] == ctx.domain_of[op.peer] ? inside : across).insert(op.rate);
    }
  }
  EXPECT_EQ(inside, std::set<BytesPerSecond>{nccl::intra_wire_rate(m)});
  EXPECT_EQ(across, std::set<BytesPerSecond>{nccl::wire_rate(m)});
  EXPECT_GT(nccl::intra_wire_rate(m), nccl::wire_rate(m));
}

}  // namespace
}  // namespace sim
