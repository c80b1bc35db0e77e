// Collective algorithms injected as Chakra ETs.
//
// `<prefix>.<position>.et`, one file per rank of the communicator, holds that
// rank's program: COMM_SEND / COMM_RECV / COMP nodes linked by data_deps, with
// peers (comm_dst / comm_src) given as positions in the communicator.
//
// Message sizes follow the workload's comm_size S, in this order:
//   1. chunk attributes (msg_chunk_cnt, total_chunk_cnt, optional
//      msg_chunk_idx, as MSCCL-derived tools write them): the message is that
//      share of the collective buffer (S, or S*N for all-gather) -- exact parts
//      when the index is given, otherwise cnt * buffer / total rounded up;
//   2. else comm_size scaled by S / collective_size, where collective_size is
//      recorded in the ET's GlobalMetadata (our writer does), rounded up;
//   3. else comm_size as written (the algorithm is taken to be written for S).
// COMP nodes take duration_micros when present, else the system's reduction
// model on their tensor_size (or comm_size) bytes. comm_type on send/recv
// nodes (MSCCL and TACOS tools write the node type 5/6 there) is ignored.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "system/program/collective_program.h"
#include "workload/rank_graph.h"

namespace sim {

struct EtTrace;  // workload/et/et_io.h: a trace read or generated

// What an imported MSCCL-IR COMP does (EtOpSpec::comp): copy src to dst
// (`cpy`), reduce src into dst (`re`), or write the reduction of its parent
// receive's message and src to dst (`rrc`, `rrs`, `rrcs`).
enum class MscclComp : std::uint8_t { kNone, kCopy, kReduce, kRecvReduce };

// An MSCCL-IR import's buffers (GlobalMetadata msccl_i_chunks,
// msccl_o_chunks, msccl_inplace): the layout the checker's data check needs.
struct MscclBuffers {
  std::int64_t i_chunks = 0, o_chunks = 0;
  bool inplace = false;
};

struct EtOpSpec {
  OpKind kind = OpKind::kCompute;
  std::uint32_t peer = 0;
  std::uint64_t bytes = 0;  // as written (comm_size / tensor_size)
  std::uint64_t tag = 0;
  Time duration = -1;
  std::int64_t chunk_idx = -1, chunk_cnt = -1, total_chunks = -1;
  std::uint64_t node_id = 0;
  // A send/recv named like the MSCCL-IR converter's nodes
  // (COMM_SEND_NODE_tb<t>_step<s>, COMM_RECV_NODE_tb<t>_step<s>): its XML
  // threadblock and step, else -1. Only the checker reads them (to recover
  // chunk indices from `EtAlgorithm::msccl_xml`); sizing ignores them.
  std::int32_t xml_tb = -1, xml_step = -1;
  // Where an MSCCL-IR import's op moves data on its rank (attributes
  // msccl_srcbuf/msccl_srcoff/msccl_dstbuf/msccl_dstoff/msccl_op, written by
  // system/producers/msccl_import.h): a send reads src, a receive writes dst
  // (none: its recv_reduce COMP consumes it), a COMP combines src into dst.
  // Buffers 'i', 'o', 's' (scratch), 't' (a fused step's transient); 0: none.
  // Only the checker reads them.
  char src_buf = 0, dst_buf = 0;
  std::int64_t src_off = -1, dst_off = -1;
  MscclComp comp = MscclComp::kNone;
};

// "rank <rank> node <node id>", as the checker's messages name an op.
inline std::string et_node_name(std::uint32_t rank, const EtOpSpec& op) {
  return "rank " + std::to_string(rank) + " node " + std::to_string(op.node_id);
}

struct EtRankProgram {
  std::vector<EtOpSpec> ops;
  std::vector<std::uint32_t> num_parents;
  std::vector<std::uint32_t> child_begin;  // children of op i: children[child_begin[i] .. child_begin[i+1])
  std::vector<std::uint32_t> children;     // ascending node id
  std::vector<std::uint32_t> roots;        // ascending node id
};

struct EtAlgorithm {
  std::string source;  // the prefix or folder it was loaded from
  std::vector<std::string> files;
  CollectiveType type = CollectiveType::kAllReduce;
  bool type_recorded = false;  // the metadata named the collective
  std::optional<std::uint64_t> written_size;
  // Rank 0's GlobalMetadata `input_file` (string), where the MSCCL-IR
  // converter stores its whole source XML; empty when absent. Only the
  // checker reads it.
  std::string msccl_xml;
  // GlobalMetadata chunk_layout "strided": rank j's block is chunks c = j mod N
  // (see CollectiveProgram::strided_blocks); only the checker reads it.
  bool strided_blocks = false;
  // GlobalMetadata chunk_sizes "equal": every one of the total_chunk_cnt parts
  // is ceil(buffer / total_chunk_cnt) bytes (CollectiveProgram::equal_parts,
  // the ring's rule); "cut" or absent: near-equal cuts that sum to the buffer.
  bool equal_parts = false;
  std::optional<MscclBuffers> msccl;  // an MSCCL-IR import (rank 0's metadata)
  std::vector<EtRankProgram> ranks;
};

// Loads and validates (peers in range, deps present, no cycle) an algorithm
// written as per-rank Chakra ETs (a folder or a prefix). Any source, MSCCL-IR
// XML included: load_et_algorithm (system/registry/algorithm_source.h).
// Throws InputError (IncompleteError for a cycle) naming file and node id.
EtAlgorithm load_et_files(const std::string& source, std::optional<CollectiveType> expected);

// The same from traces in memory (`sim collective gen` output, for tests and
// tools that check a native algorithm without writing files).
EtAlgorithm et_algorithm_from_traces(const std::vector<EtTrace>& traces, const std::string& source,
                                     std::optional<CollectiveType> expected);

class EtProgram final : public CollectiveProgram {
 public:
  EtProgram(std::shared_ptr<const EtAlgorithm> algorithm, std::uint64_t bytes);

  std::uint32_t group_size() const override { return static_cast<std::uint32_t>(algo_->ranks.size()); }
  const std::string& name() const override { return name_; }
  std::uint64_t op_count(std::uint32_t pos) const override { return algo_->ranks[pos].ops.size(); }
  void start(std::uint32_t pos, RankCursor& cursor, std::vector<OpRef>& ready) const override;
  CollectiveOp op(std::uint32_t pos, OpRef ref) const override;
  void finish(std::uint32_t pos, OpRef ref, RankCursor& cursor, std::vector<OpRef>& ready) const override;
  unsigned ref_bits() const override { return 32; }  // an op index
  void parents(std::uint32_t pos, OpRef ref, std::vector<OpRef>& out) const override;

 private:
  std::shared_ptr<const EtAlgorithm> algo_;
  std::uint64_t bytes_;
  std::string name_;
};

}  // namespace sim
