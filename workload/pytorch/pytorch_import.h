// Importing a PyTorch job: each rank's host execution trace (and, optionally,
// its Kineto device trace) becomes that rank's Chakra ET, without Chakra's
// Python tools (trace_link + converter). See docs/traces.md, "PyTorch traces".
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "workload/et/et_io.h"
#include "workload/pytorch/graph_builder.h"

namespace sim::pytorch {

struct RankFiles {
  int rank = 0;
  std::string host;    // host execution trace
  std::string kineto;  // device trace, "" when none
};

// Resolves the --host-et and --kineto arguments: each a folder (its .json /
// .json.gz files of that kind, told apart by content), a prefix (the files
// starting with it) or a file; several may be given. A file's rank is the one
// it records, else the one its name states (trace_rank.h). Throws
// InputError: nothing found, ranks not 0..N-1, a rank twice, a device trace
// for a rank without a host trace or host traces of only some ranks covered.
std::vector<RankFiles> resolve_pytorch_files(const std::vector<std::string>& host_specs,
                                             const std::vector<std::string>& kineto_specs);

struct ImportSummary {
  std::vector<std::string> warnings;  // said once each, with counts
  std::vector<std::string> lines;     // per-rank summary for people
  std::vector<BuildStats> stats;      // per rank
  std::string removed_note;           // rank files of an earlier write removed (RankSetWriter)
};

// Imports every rank, one at a time (only one rank's traces in memory),
// handing each finished ET to `on_rank` in rank order. Errors (InputError)
// name the file, rank, op id and field; a host and a device trace that are
// not of one process (pid, distributedInfo.rank) are an error.
void import_pytorch(const std::vector<RankFiles>& files, const std::function<void(int, EtTrace&&)>& on_rank,
                    ImportSummary& summary);

// Imports and writes <prefix>.<rank>.et for every rank; nothing is written
// unless every rank imports (ranks go to temporary files renamed at the end).
ImportSummary import_pytorch_to_files(const std::vector<RankFiles>& files, const std::string& prefix);

}  // namespace sim::pytorch
