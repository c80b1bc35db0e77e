// `sim sweep merge DIR... -o OUTDIR`: joins the outputs of the shards of one
// sweep (`--shard I/K`, e.g. a Slurm job array) into one results.csv and
// results.json, byte-identical to the CSV a single local run writes.
#pragma once

#include <ostream>
#include <string>
#include <vector>

namespace sim::workflows {

// Throws InputError when the folders come from different specs, disagree on a
// point, or together miss points (naming the first missing ones).
int merge_sweeps(const std::vector<std::string>& dirs, const std::string& out_dir, std::ostream& out);

}  // namespace sim::workflows
