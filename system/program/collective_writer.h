// Writes native collective algorithms as per-rank Chakra ETs.
//
// The ETs hold exactly the DAG the native program executes, with node ids in
// the program's issue order, so running them through EtProgram reproduces the
// native algorithm op for op. docs/collectives.md describes the layout.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "system/program/collective_program.h"
#include "system/program/et_algorithm.h"
#include "workload/et/et_io.h"
#include "workload/rank_graph.h"

namespace sim {

// One trace per group position, holding `program`'s DAG (written for
// collective size `bytes`; `chunks` is recorded in the metadata). Node ids
// ascend with OpRef; data_deps are parents(); chunk attributes are
// chunk_range() over chunk_total() parts, when the program gives them.
std::vector<EtTrace> program_ets(const CollectiveProgram& program, CollectiveType type, std::uint64_t bytes,
                                 std::uint32_t chunks);
// The same for one group position (what program_ets() writes for it).
EtTrace program_et(const CollectiveProgram& program, CollectiveType type, std::uint64_t bytes, std::uint32_t chunks,
                   std::uint32_t pos);

// One rank's program as a DAG: ops in ascending OpRef order (node ids are the
// indices), each with its data dependencies (indices) and chunk range.
// Checks on the way that parents() agrees with start()/finish() (throws
// std::logic_error otherwise).
struct DagOp {
  OpRef ref = 0;
  CollectiveOp op;
  ChunkRange range;
  std::vector<std::uint64_t> deps;
};
std::vector<DagOp> program_dag(const CollectiveProgram& program, std::uint32_t pos);

// The same DAGs as the checker and EtProgram read them, without going through
// protobuf: what program_ets() writes, as load_et_algorithm() would load it.
EtAlgorithm program_algorithm(const CollectiveProgram& program, CollectiveType type, std::uint64_t bytes);



// Sets an integer attribute as int32 when it fits (ASTRA-sim's feeders read
// comm_src/comm_dst/comm_tag and the chunk trio as int32), else as int64 (our
// reader takes both).
void put_int_attr(et::Node& node, const char* name, std::uint64_t value);
// Appends a GlobalMetadata attribute (int64 or string).
void put_metadata(et::GlobalMetadata& md, const char* name, std::int64_t value);
void put_metadata(et::GlobalMetadata& md, const char* name, const std::string& value);

// Writes `traces[r]` to <prefix>.<r>.et as workload/et/rank_set_writer.h says
// (the prefix checked, its folder created, rank files of an earlier write
// that the new set does not replace removed). Returns
// RankSetWriter::removed_note(), "" when nothing was removed.
std::string write_rank_ets(const std::vector<EtTrace>& traces, const std::string& prefix);
// The same for program_ets(program, ...), one rank in memory at a time (large
// synthesized algorithms: 1,024 ranks x 2,000 nodes would hold gigabytes).
std::string write_program_ets(const CollectiveProgram& program, CollectiveType type, std::uint64_t bytes,
                              std::uint32_t chunks, const std::string& prefix);

}  // namespace sim
