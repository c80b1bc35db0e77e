// Several jobs on one cluster: which ranks run where.
//
//   sim --workload a=wl/a --workload b=wl/b --comm-group a=groups_a.json
//        --placement placement.json --network configs/torus4x4.yml
//
// Each job keeps its own ranks 0..n-1 (comm_src/comm_dst, process groups and
// tags are per job); the jobs share the network. The placement JSON maps
// "<job>-<rank>" to an NPU id ({"a-0": 0, "a-1": 5, "b-0": 1, ...}, the form
// public multi-tenant artifacts use); it must place every rank of every job,
// each on its own NPU. Without one, jobs are packed in the order given: the
// first job on NPUs 0..n_a-1, the next right after, and so on.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "system/groups/group_table.h"

namespace sim {

struct JobInput {
  std::string name;            // "" for a single unnamed workload
  std::string workload;        // folder or prefix of its ETs
  std::string comm_group_file; // its --comm-group file, or ""
  std::uint8_t service_level = 0;  // its --service-level (0 to 15)
};

// --workload values (a lone PATH, or NAME=PATH each) and --comm-group values
// (a lone FILE for a single workload, or NAME=FILE). Throws InputError for a
// repeated or unknown job name, or a mix of the two forms.
std::vector<JobInput> parse_job_args(const std::vector<std::string>& workloads,
                                     const std::vector<std::string>& comm_groups);

// --service-level values: a lone N (0 to 15, InfiniBand's service levels)
// for a single workload, or NAME=N per job (jobs not named keep 0). Throws
// InputError for a value out of range, an unknown or repeated job name, or a
// mix of the two forms.
void apply_service_levels(std::vector<JobInput>& jobs, const std::vector<std::string>& levels);

// NPU per rank (jobs in order, ranks in order) from the placement file.
// Throws InputError naming the file and key: unknown job or rank, an NPU out
// of range or used twice, a rank left unplaced.
std::vector<std::uint32_t> load_placement(const std::string& path, const std::vector<JobSpec>& jobs,
                                          std::uint32_t npu_count);

}  // namespace sim
