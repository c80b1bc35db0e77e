// A sweep's output folder: results.csv (one tidy row per point and
// collective, byte-identical however the sweep was run: locally, on threads,
// sharded or on MPI) and results.json (the same plus wall times, warnings and
// what this run computed versus reused). Both written atomically.
//
// results.csv columns: point, one column per axis (values as written in the
// spec; the `collective` axis as `--collective`), status (ok | failed), exit_code, npus, sim_time_ns (makespan),
// collective, bytes, group_size, algorithm, ranks, time_ns (the collective's
// slowest rank), algbw_gbps, busbw_gbps (nccl-tests definitions, GB/s = 1e9
// B/s), message (why a point failed). Wall time is only in results.json, so
// the CSV stays deterministic.
//
// A sweep of generated training iterations (a 'gen:transformer?...'
// workload) has one row per point, without the collective columns, and after
// sim_time_ns the training report's columns: gpus, model_tflops_per_gpu
// (TFLOP/s = 1e12 FLOP/s), mfu_percent, exposed_<dim>_ns for tp, pp, dp, cp,
// ep and other (time that dimension's communication ran while no compute
// did, mean over the sampled ranks), exposed_comm_ns (any communication, no
// compute), pipeline_bubble_percent.
#pragma once

#include <string>
#include <vector>

#include "workflows/sweep/point_result.h"

namespace sim::workflows {

struct SweepRow {
  std::vector<std::string> labels;  // per axis
  PointResult result;
};

struct SweepOutput {
  std::string spec_path, spec_digest;
  std::vector<std::string> axes;
  std::size_t total_points = 0;  // in the whole sweep, all shares
  std::string share = "all";     // "all", or "I/K" for one shard
  std::vector<SweepRow> points;  // ascending point index
  bool interrupted = false;
  bool training = false;  // generated training iterations: the training columns
};

std::string results_csv(const SweepOutput& out);
nlohmann::json results_json(const SweepOutput& out);
// Writes OUTDIR/results.csv and OUTDIR/results.json (creating OUTDIR).
void write_results(const std::string& out_dir, const SweepOutput& out);
// Throws InputError when OUTDIR/results.csv or results.json could not be
// written (a folder in the way, a folder without write permission), before a
// sweep spends its time on the points.
void check_results_writable(const std::string& out_dir);
// Reads OUTDIR/results.json back (throws InputError naming the file).
SweepOutput read_results(const std::string& out_dir);

}  // namespace sim::workflows
