// Chunk indices of an MSCCL-IR conversion, recovered from its source XML.
//
// The collectiveapi converter turns MSCCL-IR XML into Chakra ETs whose sends
// and receives carry no chunk attributes, but it stores the whole XML in the
// metadata (EtAlgorithm::msccl_xml) and names its nodes
// COMM_{SEND,RECV}_NODE_tb<t>_step<s> (EtOpSpec::xml_tb / xml_step). The
// collective checker uses this to run its data check on such ETs.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "system/program/collective_program.h"
#include "system/program/et_algorithm.h"

namespace sim {

// Recovers every send's and receive's chunks from `algo.msccl_xml`: a node
// named COMM_SEND_NODE_tb<t>_step<s> on rank g is <gpu id=g><tb id=t><step
// s=s>, whose srcoff (a send) or dstoff (a receive) and cnt name its chunks,
// out of nchunksperloop. `n`: the ranks; `reduced(rank, op)`: whether a
// receive is reduced by a COMP (the step must then be 'rrc', else 'r').
// Fills `chunks` (per rank and op; sends and receives only) and `total`
// (nchunksperloop) and returns "", or returns why the XML does not serve (the
// checker puts it after "the ET carries no chunk indices ... and ").
std::string msccl_xml_chunks(const EtAlgorithm& algo, std::uint32_t n,
                             const std::function<bool(std::uint32_t, std::uint32_t)>& reduced,
                             std::vector<std::vector<ChunkRange>>& chunks, std::int64_t& total);

}  // namespace sim
