// `sim sweep SPEC.yml -o OUTDIR`: expands the spec, reads every point's
// inputs, reuses cached points, runs the rest on threads, writes the results.
//
// A run covers one share of the points: all of them, a shard (`--shard I/K`:
// points whose index mod K is I), and within it the ranks of a Communicator
// (MPI) take every size-th point. Every share writes its points into the same
// result cache; rank 0 gathers and writes the output, so local, sharded and
// MPI runs give byte-identical results.csv files.
#pragma once

#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "workflows/sweep/results_writer.h"

namespace sim::workflows {

// Processes that split a share among themselves (MPI ranks).
class Communicator {
 public:
  virtual ~Communicator() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  // Every rank's strings, rank order, on rank 0 (empty elsewhere).
  virtual std::vector<std::string> gather(const std::string& mine) = 0;
};

struct SweepOptions {
  std::string spec;
  std::string out_dir;
  unsigned jobs = 0;  // threads; 0: one per core
  unsigned shard_index = 0, shard_count = 1;
  bool reuse = true;  // false (--no-cache): recompute every point (results still stored)
  bool quiet = false;
  double progress_interval = 10;  // seconds between progress lines off a terminal
  Communicator* communicator = nullptr;
};

// Exit codes of a sweep: 0 every point ok; 4 finished, some points failed
// (recorded in the results); 130 interrupted (finished points kept).
// Throws InputError for a bad spec (exit 2).
enum SweepExit : int { kSweepOk = 0, kSweepPointsFailed = 4, kSweepInterrupted = 130 };
int run_sweep(const SweepOptions& options, std::ostream& out);

// Parses "I/K" (0 <= I < K); throws InputError.
void parse_shard(const std::string& text, unsigned& index, unsigned& count);

}  // namespace sim::workflows
