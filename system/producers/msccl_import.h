// MSCCL-IR XML -> per-rank Chakra ETs (`sim collective import msccl`).
//
// Every <gpu> becomes one rank's DAG of COMM_SEND / COMM_RECV / COMP nodes
// (node ids from 0, in threadblock id order then step order), named like the
// collectiveapi converter's (COMM_SEND_NODE_tb<t>_step<s>, ...):
//
//   s     SEND to tb.send             cpy   COMP copy src -> dst
//   r     RECV from tb.recv -> dst    re    COMP reduce src into dst
//   rrc   RECV -> COMP(dst = msg + src)
//   rcs   RECV -> dst, SEND dst on
//   rrs   RECV -> COMP(t = msg + src) -> SEND t   (t: a transient slot, no buffer)
//   rrcs  RECV -> COMP(dst = msg + src) -> SEND dst
//   nop   no node: it only carries a dependency
//
// Within a step each node waits for the one before. A step's first node waits
// for the previous step of its threadblock (threadblocks run their steps in
// order) and for the step its depid/deps names; waiting for a nop means
// waiting for what the nop waits for (the runtime's accumulated nop deps).
// Messages go on tag = the threadblock's channel: MSCCL matches them FIFO per
// (sender, receiver, channel), which is our FIFO per (src, dst, tag).
//
// Sizes stay symbolic: each node carries msg_chunk_cnt = cnt,
// total_chunk_cnt = nchunksperloop and msg_chunk_idx (a receive takes the
// index of the send it matches), so a run sizes every message as cnt chunks of
// buffer / nchunksperloop, buffer = the collective's S (S*N for all-gather):
// one import serves every size. `size` also writes the resolved comm_size
// (and COMP tensor_size) for S = size, which ASTRA-sim master needs.
// `proto` (Simple, LL, LL128) changes nothing in the model: it is recorded in
// the metadata; docs/collectives.md says why.
//
// Bad input throws InputError "<file>:<line>: gpu G tb T step S: ..." (malformed
// XML, unknown step type, dependency on an absent step, dependency cycle, peer
// out of range, buffer range, unmatched sends and receives).
#pragma once

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "system/program/et_algorithm.h"
#include "system/producers/msccl_ir.h"
#include "workload/et/et_io.h"
#include "workload/rank_graph.h"

namespace sim {

struct MscclImport {
  CollectiveType type = CollectiveType::kAllReduce;
  std::vector<EtTrace> traces;  // one per GPU id
  std::uint64_t steps = 0, sends = 0, recvs = 0, comps = 0;
};

// `coll` overrides (or, for coll="custom", supplies) the XML's collective;
// given together with a known coll they must agree.
MscclImport import_msccl(const MscclAlgo& xml, std::optional<CollectiveType> coll,
                         std::optional<std::uint64_t> size);

// Whether `source` names an MSCCL-IR XML file (ends in .xml).
bool is_msccl_xml_path(const std::string& source);

// The XML's collective, for --collective ALGO.xml without a type
// (InputError when it names none that the simulator knows).
CollectiveType msccl_xml_collective(const std::string& path);

// An XML imported straight into the form load_et_algorithm() returns.
EtAlgorithm load_msccl_algorithm(const std::string& path, std::optional<CollectiveType> expected);

struct MscclImportOptions {
  std::string xml, prefix, collective, size_text;
};
// `sim collective import msccl`: writes <prefix>.<gpu>.et; returns the exit code.
int run_msccl_import(const MscclImportOptions& options, std::ostream& out);

}  // namespace sim
