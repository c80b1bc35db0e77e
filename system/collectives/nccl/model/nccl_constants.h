// NCCL's own numbers, in one place, each with the file of NVIDIA/nccl (or of
// the platform's plugin) it comes from. The code that uses them is ours:
// the tuning model (nccl_tuner.cpp), the topology search (nccl_system.cpp),
// the protocols' steps and chunks (nccl_protocol.h). The factors inside
// NCCL's tuning formulas (0.92 for trees, 7/9 for LL128 inside a node, ...)
// stay in the formula they belong to, as tuning.cc writes them. docs/nccl.md
// lists every constant with its source and release.
#pragma once

#include <cstdint>

namespace sim::nccl {

inline constexpr int kAlgos = 6;   // NCCL_NUM_ALGORITHMS (Tree, Ring, CollNetDirect, CollNetChain, NVLS, NVLSTree)
inline constexpr int kProtos = 3;  // NCCL_NUM_PROTOCOLS (LL, LL128, Simple)

// --- The tuning model: src/graph/tuning.cc, per release. ---
// Index order: [algorithm][protocol] as above; link classes [NVLink, PCI,
// network]; caps [GPU generation or CPU vendor][1 node, 2 nodes, more].
struct TuningConstants {
  double base_lat[kAlgos][kProtos];     // latency of a collective, us (`baseLat`)
  double hw_lat[3][kAlgos][kProtos];    // latency per hop by link class, us (`hwLat`)
  double ll_max_bw[3][3];               // GB/s (`llMaxBws`)
  double per_ch_max_ring_ll128[3][3];   // GB/s a channel (`perChMaxRingLL128Bws`)
  double per_ch_max_tree_ll128[3][3];   // (`perChMaxTreeLL128Bws`)
  double per_ch_max_tree[3][3];         // (`perChMaxTreeBws`)
};

// NCCL 2.20.3 (NVIDIA/nccl commit b6475625), and the releases before it the
// model knows (2.17-2.19).
inline constexpr TuningConstants kTuning220 = {
    {{6.8, 14.0, 0}, {6.6, 14.0, 8.4}, {0, 0, 0}, {0, 0, 0}, {0, 0, 0}, {0, 0, 0}},
    {{{.6, 1.25, 28}, {.6, 1.9, 3.4}, {0, 0, 3.7}, {0, 0, 2.8}, {0, 0, 23}, {0, 0, 23}},
     {{1.0, 1.9, 28}, {1.0, 2.5, 5.7}, {0, 0, 3.7}, {0, 0, 2.8}, {0, 0, 0}, {0, 0, 0}},
     {{5.0, 8.5, 28}, {2.7, 4.0, 14.0}, {0, 0, 31}, {0, 0, 30}, {0, 0, 18}, {0, 0, 14}}},
    {{39.0, 39.0, 20.4}, {87.7, 22.5, 19.0}, {87.7, 22.5, 19.0}},
    {{20.0, 20.0, 20.0}, {20.0, 20.0, 20.0}, {36.7, 36.7, 36.7}},
    {{20.0, 20.0, 20.0}, {20.0, 20.0, 20.0}, {36.7, 36.7, 29.0}},
    {{26.5, 18.5, 10.0}, {24.0, 23.6, 17.8}, {38.7, 41.4, 36.0}}};

// NCCL 2.21 (2.21.5, commit ab2b89c4): Hopper's LL cap inside a node 141
// GB/s (its row {141.0, 45.0, 35.0}; across nodes the CPU's row applies), and
// NVLS and NVLS-tree 25 us per NVLink hop.
constexpr TuningConstants release_221(TuningConstants t) {
  t.ll_max_bw[2][0] = 141.0;
  t.ll_max_bw[2][1] = 45.0;
  t.ll_max_bw[2][2] = 35.0;
  t.hw_lat[0][4][2] = t.hw_lat[0][5][2] = 25;
  return t;
}
inline constexpr TuningConstants kTuning221 = release_221(kTuning220);

// NCCL 2.23 (2.23.4, commit a6979c9f): tree/Simple 8.4 us of base latency and
// 4 us per NVLink or PCI hop, 14 us per network hop (28 before). Unchanged
// through 2.27 (2.25.1, 2.26.2 and 2.27's text read; 2.28 rewrote NVLS's and
// NVLS-tree's bandwidth and is not modelled).
constexpr TuningConstants release_223(TuningConstants t) {
  t.base_lat[0][2] = 8.4;
  t.hw_lat[0][0][2] = t.hw_lat[1][0][2] = 4.0;
  t.hw_lat[2][0][2] = 14;
  return t;
}
inline constexpr TuningConstants kTuning223 = release_223(kTuning221);

// Without a `version`, NCCL's choice and latencies take 2.20's tables (and its
// chunks the default release's rules, below): the model every preset that
// names no release was fitted with.
inline constexpr int kDefaultTablesVersion = 220;

// The tables of NCCL's release `version` (200 + minor).
constexpr const TuningConstants& tuning_constants(int version) {
  return version >= 223 ? kTuning223 : version >= 221 ? kTuning221 : kTuning220;
}

// Tree bandwidth correction for sizes 64 B << i (`treeCorrectionFactor`), per protocol.
inline constexpr double kTreeCorrection[kProtos][23] = {
    {1.0, 1.0, 1.0, 1.0, .9, .8, .7, .7, .7, .7, .6, .5, .4, .4, .5, .6, .7, .8, .9, 1.0, 1.0, 1.0, 1.0},
    {1.0, 1.0, 1.0, 1.0, 1.0, .9, .8, .8, .8, .7, .6, .6, .6, .6, .6, .6, .8, .9, .9, .9, .9, 1.0, 1.0},
    {.9, .9, .9, .9, .9, .9, .9, .8, .7, .6, .6, .5, .5, .5, .5, .6, .7, .8, .7, .7, .8, .9, .9}};

// CollNet direct's latency per peer of its fan in and out of the head, us
// (tuning.cc: `(localRanks - 1) * 0.4`).
inline constexpr double kCollNetDirectPeerLatencyUs = 0.4;

// --- The machine as NCCL sees it: src/graph/topo.h. ---
// GB/s per NVLink and direction NCCL plans with (SM70_NVLINK_BW, SM80_NVLINK_BW,
// SM90_NVLINK_BW), against the spec sheet's 25 GB/s for NVLink 2, 3 and 4.
inline constexpr double kNvlinkBwSm70 = 20.0;
inline constexpr double kNvlinkBwSm80 = 20.0;
inline constexpr double kNvlinkBwSm90 = 20.6;
inline constexpr double kNvlinkSpecBw = 25.0;

// --- The topology search: src/graph/search.cc. ---
// Speeds per channel tried, GB/s, highest first (speedArrayIntra/Inter,
// sm90SpeedArrayIntra/Inter).
inline constexpr double kSpeedIntra[] = {40.0, 30.0, 20.0, 18.0, 15.0, 12.0, 10.0, 9.0, 7.0, 6.0, 5.0, 4.0, 3.0};
inline constexpr double kSpeedInter[] = {48.0, 30.0, 28.0, 24.0, 20.0, 18.0, 15.0, 12.0, 10.0, 9.0,
                                         7.0,  6.0,  5.0,  4.0,  3.0,  2.4,  1.2,  0.24, 0.12};
inline constexpr double kSpeedIntraSm90[] = {60.0, 50.0, 40.0, 30.0, 24.0, 20.0, 15.0, 12.0, 11.0, 6.0, 3.0};
inline constexpr double kSpeedInterSm90[] = {48.0, 45.0, 42.0, 40.0, 30.0, 24.0, 22.0, 20.0, 17.5,
                                             15.0, 12.0, 6.0,  3.0,  2.4,  1.2,  0.24, 0.12};
inline constexpr int kMaxChannels = 32;         // a graph's channels after the split (2 x kSearchChannels)
inline constexpr int kSearchChannels = 16;      // the search's maxChannels (MAXCHANNELS / 2)
inline constexpr int kMaxNvlsArity = 32;        // NCCL_MAX_NVLS_ARITY
inline constexpr double kDuplicateAbove = 25;   // rings/trees of >= 25 GB/s: twice the channels at half speed
// ... except on Hopper a graph of more than 4 channels below 50 GB/s, kept as
// found (src/graph/search.cc, ncclTopoDupChannels: ccMin > 80).
inline constexpr double kHopperKeepBelow = 50;
inline constexpr int kHopperKeepOver = 4;
// The CTAs a ring or tree runs on are not the search's channels: the
// communicator takes twice the fewer of the ring's and the tree's
// (src/graph/connect.cc, ncclTopoPostset: the copies get the mirrored tree),
// half as many again where CollNet runs and its graph is faster inside the node
// than across, and on Hopper across nodes twice again while below 16 when the
// ring is faster than 45 GB/s a channel ("4 compute channels per search
// channel"); at most MAXCHANNELS (64 from 2.22 on; src/include/device.h).
inline constexpr int kRunChannelsMax = 64;
inline constexpr double kHopperDoubleAbove = 45;
inline constexpr int kHopperDoubleBelow = 16;

// --- Protocols and chunks: src/include/device.h, src/enqueue.cc. ---
inline constexpr int kNcclSteps = 8;  // NCCL_STEPS: slots of a connection's buffer
// Payload bytes one ring step moves per channel: LL 16 KiB; LL128 120/128 of
// 614,400 wire bytes; Simple 2 MiB (a 4 MiB buffer, 2 steps of chunkSteps).
inline constexpr std::uint64_t kLLStepPayload = 16 * 1024;
inline constexpr std::uint64_t kLL128StepPayload = 576000;
inline constexpr std::uint64_t kSimpleBuffer = 4 * 1024 * 1024;  // NCCL_PROTO_SIMPLE's buffer per connection (NCCL_BUFFSIZE)
inline constexpr std::uint64_t kRingChunkSteps = 4;  // ALLREDUCE/ALLGATHER/REDUCESCATTER_CHUNKSTEPS: NCCL_STEPS / 2
inline constexpr std::uint64_t kSimpleStepPayload = kSimpleBuffer / kNcclSteps * kRingChunkSteps;
// NVLS moves 128 KiB per rank and step (NCCL_NVLS_CHUNKSIZE's default).
inline constexpr std::uint64_t kNvlsChunk = 128 * 1024;
// CTAs NVLS and NVLS-tree run on: nvlsChannels (NCCL_NVLS_NCHANNELS, 16 by
// default on Hopper), whatever the topology search found.
inline constexpr std::uint32_t kNvlsChannels = 16;
// NCCL's release, as 200 + minor (2.21 -> 221): the `version` key of `nccl`.
// Left out, the chunk rules of 2.21 and later, on 2.20's tuning tables
// (kDefaultTablesVersion, above).
inline constexpr int kDefaultVersion = 221;
// The releases the model knows: tuning tables of 2.20, 2.21 and 2.23 (which
// 2.24-2.27 keep), and chunk rules from 2.17, NVLS's arrival (NVLS-tree from
// 2.18, the 4-node NVLS-tree chunk cap from 2.19, NCCL_NVLS_CHUNKSIZE from
// 2.21), to 2.27, the newest it was compared with (the p5 preset against
// nccl-tests on 2.27.7, docs/nccl.md). Earlier and later releases differ by
// rules it does not keep (2.0 had rings alone; 2.23 brought PAT), so a
// version outside them is refused rather than run as another's rules.
inline constexpr int kOldestVersion = 217;
inline constexpr int kNewestVersion = 227;

}  // namespace sim::nccl
