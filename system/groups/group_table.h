// Every communicator of a run, resolved once before it starts.
//
// Each rank's COMM_COLL nodes name a group by pg_name (system/groups/process_groups.h)
// and/or involved_dim, ASTRA-sim's per-node list of network dimensions: the
// collective spans the dimensions marked true, and its group is the ranks of
// the job whose NPUs share this rank's coordinates in every other dimension
// (NPU id = mixed-radix address over Topology::dims(), dimension 0 fastest).
// Absent means all dimensions; entries past the topology's dimensions must be
// true (ASTRA-sim's default lists four); a list shorter than the topology's
// dimensions is an error. Where both are given they must name the same ranks.
// Neither given, or a group equal to the whole job: the job's world group.
//
// Ranks are graph indices (jobs are consecutive ranges of them); members are
// also given as NPU ids, the addresses the network and algorithms use.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "system/groups/process_groups.h"
#include "system/groups/replica_folding.h"
#include "workload/rank_graph.h"

namespace sim {

struct JobSpec {
  std::string name;          // "" for a run of one job
  std::uint32_t ranks = 0;   // graphs [first, first + ranks), jobs in order
  std::map<std::string, std::vector<std::uint32_t>> comm_groups;  // job-local ranks
  std::string comm_group_file;  // where comm_groups came from (for messages)
  std::uint8_t service_level = 0;  // its messages' (Connection::service_level)
};

struct CommGroup {
  std::uint32_t job = 0;
  std::string label;                  // "pg_name '4'", "involved_dim [true, false]", "all ranks"
  std::vector<std::uint32_t> ranks;   // graph indices, in group-position order
  std::shared_ptr<const std::vector<std::uint32_t>> npus;  // their NPUs, same order
  std::vector<std::uint32_t> dims;    // topology dimensions its NPUs span
  // Folded replicas (replica_folding.h): a group of one rank's copies has the
  // simulated copies in `ranks` (one, or `period` at positions 0..period-1),
  // every copy's NPU in `npus`, and the first simulated copy's position there
  // in `mirrored_pos`; -1 for any other group.
  std::int32_t mirrored_pos = -1;
  std::uint32_t period = 1;
  bool unfoldable = false;  // folded: all ranks of the world, which no collective may use
};

class GroupTable {
 public:
  // Throws InputError naming file, rank, node id and name for every problem
  // (unknown pg_name, non-member, pg_name/involved_dim conflict, bad involved_dim).
  GroupTable(const std::vector<RankGraph>& graphs, const std::vector<JobSpec>& jobs,
             const std::vector<std::uint32_t>& npu_of, const std::vector<std::uint32_t>& topology_dims,
             std::uint32_t npu_count, const ReplicaFolding& folding = {});

  std::size_t size() const { return groups_.size(); }
  const CommGroup& group(std::uint32_t id) const { return groups_[id]; }
  // The group of graph `rank`'s communicator spec `spec` (TaskNode::group).
  std::uint32_t group_of(std::uint32_t rank, std::uint32_t spec) const { return spec_group_[rank][spec]; }
  std::uint32_t job_of(std::uint32_t rank) const { return job_of_[rank]; }
  std::uint32_t job_first(std::uint32_t job) const { return job_first_[job]; }

 private:
  std::uint32_t world(std::uint32_t job);
  std::uint32_t add(std::uint32_t job, const std::string& key, std::string label, std::vector<std::uint32_t> ranks);
  std::uint32_t resolve(std::uint32_t rank, const CommunicatorSpec& spec);
  std::vector<std::uint32_t> involved_ranks(std::uint32_t rank, const CommunicatorSpec& spec, const std::string& where);
  std::vector<std::uint32_t> coordinates(std::uint32_t npu) const;
  std::vector<std::uint32_t> spanned_dims(const std::vector<std::uint32_t>& npus) const;

  std::uint32_t add_mirrored(std::uint32_t rank, const ProcessGroup& pg, const std::string& where);

  const std::vector<RankGraph>& graphs_;
  const ReplicaFolding& folding_;
  std::vector<std::uint32_t> npu_of_;
  std::vector<std::uint32_t> dims_;
  std::vector<std::uint32_t> job_of_, job_first_, job_size_;
  std::vector<ProcessGroups> defined_;  // per job
  std::vector<CommGroup> groups_;
  std::map<std::string, std::uint32_t> by_key_;
  std::vector<std::vector<std::uint32_t>> spec_group_;  // per rank, per spec
  // (job, involved mask) -> (NPU with the involved coordinates zeroed -> the job's ranks there)
  std::map<std::pair<std::uint32_t, std::uint64_t>, std::map<std::uint64_t, std::vector<std::uint32_t>>> lines_;
};

}  // namespace sim
