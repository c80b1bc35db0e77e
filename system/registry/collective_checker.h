// Checks a collective algorithm written as Chakra ETs, by running all ranks
// symbolically (zero time) at one collective size.
//
// Structure: every send is matched, FIFO per (src, dst, tag), by a receive of
// the same size (sizes as EtProgram resolves them, i.e. as a run would), and
// every rank finishes all its ops. Data (all-reduce, reduce-scatter,
// all-gather, when every message names its chunks with msg_chunk_idx /
// msg_chunk_cnt, or, for an MSCCL-IR conversion without them, when the
// source XML in the metadata (input_file) names them through the converter's
// node names COMM_{SEND,RECV}_NODE_tb<t>_step<s>): each rank tracks, per chunk of the buffer, which ranks'
// contributions it holds; a receive whose child is a reduce COMP merges, any
// other receive overwrites; at the end every rank must hold what the
// collective promises, and no contribution may be reduced twice.
// docs/collectives.md describes the rules in full.
//
// Pieces: sends and receives match through MessageMatcher (message_matcher.h),
// the holdings live in ChunkHoldings (chunk_holdings.h), and an MSCCL-IR
// conversion's chunks come from msccl_xml_chunks (msccl_xml_chunks.h).
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "system/program/et_algorithm.h"

namespace sim {

struct AlgorithmCheck {
  std::uint32_t ranks = 0;
  std::uint64_t ops = 0;
  std::uint64_t messages = 0;
  std::uint64_t min_rank_bytes = 0, max_rank_bytes = 0;  // bytes a rank sends, at the checked size
  bool data_checked = false;
  std::string data_note;  // what the data check established (where the chunk indices came from, when
                          // not from attributes, on a line before), or why it was skipped
};

// `type_known`: the collective type of `algo` was recorded or given (else the
// data check is skipped). Throws InputError for a size mismatch or a data
// violation, IncompleteError when ranks are stuck or messages unreceived;
// each message names the rank, node id and (for data) the chunk at fault.
// The data check is skipped (AlgorithmCheck::data_note says why) when its
// per-rank chunk bitsets would pass `max_data_bytes`; the fuzz harness lowers
// it so that an input is never a gigabyte of bitsets under the sanitizers.
inline constexpr std::uint64_t kMaxDataCheckBytes = std::uint64_t{1} << 30;
AlgorithmCheck check_et_algorithm(std::shared_ptr<const EtAlgorithm> algo, bool type_known, std::uint64_t bytes,
                                  std::uint64_t max_data_bytes = kMaxDataCheckBytes);

}  // namespace sim
