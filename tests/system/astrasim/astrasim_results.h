// Test helper: the rows of ASTRA-sim's reference results
// (../shared/testdata/astrasim-reference/results_sample.csv).
#pragma once

#include <cstdint>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace sim::testing {

// The reference runs' preferred-dataset-splits: each collective in 4 chunks.
inline constexpr std::uint64_t kSplits = 4;

struct AstraSimRow {
  std::string backend, topology, collective, algorithm;
  std::uint32_t npus = 0;
  std::uint64_t bytes = 0;  // per rank
  std::int64_t ns = 0;      // ASTRA-sim's simulated time
};

// Columns: backend,topology,npus,collective,algorithm,size_bytes,sim_time_ns (header skipped).
inline std::vector<AstraSimRow> read_astrasim_rows(const std::string& path) {
  std::ifstream in(path);
  std::vector<AstraSimRow> rows;
  std::string line;
  std::getline(in, line);
  while (std::getline(in, line)) {
    std::stringstream ss(line);
    AstraSimRow r;
    std::string npus, bytes, ns;
    std::getline(ss, r.backend, ',');
    std::getline(ss, r.topology, ',');
    std::getline(ss, npus, ',');
    std::getline(ss, r.collective, ',');
    std::getline(ss, r.algorithm, ',');
    std::getline(ss, bytes, ',');
    std::getline(ss, ns, ',');
    if (ns.empty()) continue;
    r.npus = static_cast<std::uint32_t>(std::stoul(npus));
    r.bytes = std::stoull(bytes);
    r.ns = std::stoll(ns);
    rows.push_back(r);
  }
  return rows;
}

}  // namespace sim::testing
