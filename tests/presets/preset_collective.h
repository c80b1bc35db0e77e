// One collective on a preset's generated files, through the binary, as the
// checks against measured curves run it: `sim system gen PRESET --nodes N`
// (once per node count, in `folder`), a generated microbenchmark of 8 GPUs a
// node, and the slowest rank's record of `sim --csv` (nccl-tests reports the
// mean over ranks of calls run back to back, where every rank's period is the
// slowest rank's).
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "common/run_sim.h"

namespace sim::testing {

struct PresetCollective {
  std::string algorithm;  // the CSV's algorithm, e.g. nccl:nvlstree/simple
  double busbw = 0;       // GB/s
};

// The cells of one CSV line; a quoted cell may hold commas.
inline std::vector<std::string> csv_cells(const std::string& line) {
  std::vector<std::string> out;
  std::string cell;
  bool quoted = false;
  for (const char c : line) {
    if (c == '"') {
      quoted = !quoted;
    } else if (c == ',' && !quoted) {
      out.push_back(cell);
      cell.clear();
    } else {
      cell += c;
    }
  }
  out.push_back(cell);
  return out;
}

// Runs `coll` of `bytes` on `nodes` nodes of `preset`, its files and scratch in `folder`.
// Failures are gtest failures; the result is then empty.
inline PresetCollective run_preset_collective(const std::string& folder, const std::string& preset, int nodes,
                                              const std::string& coll, std::uint64_t bytes) {
  namespace fs = std::filesystem;
  const std::string sys = folder + "/" + preset + "x" + std::to_string(nodes), wl = folder + "/wl",
                    csv = folder + "/run.csv";
  if (!fs::exists(sys)) {
    const SimRun gen = run_sim("system gen " + preset + " --nodes " + std::to_string(nodes) + " -o " + sys);
    EXPECT_EQ(gen.code, 0) << gen.output;
    if (gen.code != 0) return {};
  }
  const SimRun wgen = run_sim("workload gen collectives --npus " + std::to_string(8 * nodes) + " --coll " + coll +
                              " --size " + std::to_string(bytes) + " -o " + wl);
  EXPECT_EQ(wgen.code, 0) << wgen.output;
  const SimRun r = run_sim("--workload " + wl + " --system " + sys + " --csv " + csv + " -q");
  EXPECT_EQ(r.code, 0) << r.output;
  if (wgen.code != 0 || r.code != 0) return {};
  std::ifstream in(csv);
  std::string line;
  std::getline(in, line);  // rank,node_id,type,bytes,group_size,algorithm,start_ns,duration_ns,algbw_gbps,busbw_gbps
  PresetCollective slowest;
  double slowest_ns = -1;
  while (std::getline(in, line)) {
    const auto cells = csv_cells(line);
    if (cells.size() < 10) continue;
    const double ns = std::stod(cells[7]);
    if (ns > slowest_ns) {
      slowest_ns = ns;
      slowest = {cells[5], std::stod(cells[9])};
    }
  }
  EXPECT_GE(slowest_ns, 0) << "no record in " << csv;
  return slowest;
}

}  // namespace sim::testing
