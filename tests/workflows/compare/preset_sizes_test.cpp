// `sim calibrate REFERENCE --preset NAME` and `sim compare REFERENCE --preset
// NAME`: a reference holding rows at several node counts, each row simulated
// on the preset generated at its own node count; the fitted values beside
// their bounds and the warning for one on a bound; the row checks.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>

#include "common/run_sim.h"
#include "common/temp_folder.h"
#include "core/units.h"
#include "presets/preset.h"
#include "workflows/calibrate/calibrate.h"
#include "workflows/compare/row_simulation.h"
#include "workflows/compare/curve_table.h"

namespace sim::workflows {
namespace {

using sim::testing::run_shell;
using sim::testing::run_sim;
using sim::testing::TempFolderTest;

const std::string kPreset = "dgx-h100";  // 8 GPUs per node

class PresetSizes : public TempFolderTest {
 protected:
  // A reference-curve CSV with all-reduce rows of 1 MiB and 4 MiB at 1 and 2
  // nodes of dgx-h100, timed by the simulator with every NCCL call's overhead
  // set to `overhead` (the preset's own files have 0us), to the picosecond.
  std::string reference(const std::string& overhead, bool with_nodes_column = true) {
    std::ofstream out(path("reference.csv"));
    out << "system" << (with_nodes_column ? ",nodes" : "")
        << ",ranks,collective,size_bytes,time_us,algbw_GBps,busbw_GBps\n";
    for (std::uint32_t nodes : {1u, 2u}) {
      const presets::PresetFiles f = presets::generate_preset(presets::find_preset(kPreset), nodes);
      std::string sys = f.system_yaml;
      for (std::size_t at = 0; (at = sys.find("overhead=0us", at)) != std::string::npos;) {
        sys.replace(at, 12, "overhead=" + overhead);
        at += 9 + overhead.size();
      }
      for (const std::uint64_t bytes : {std::uint64_t{1} << 20, std::uint64_t{4} << 20}) {
        double busbw = 0;
        const std::uint64_t ps = simulate_collective(f.network_yaml, "n", sys, "s", "ALL_REDUCE", bytes, &busbw);
        char row[256];
        std::snprintf(row, sizeof row, "test,%s%u,all_reduce,%llu,%.6f,%.6f,%.6f\n",
                      with_nodes_column ? (std::to_string(nodes) + ",").c_str() : "", nodes * 8,
                      static_cast<unsigned long long>(bytes), static_cast<double>(ps) / 1e6,
                      static_cast<double>(bytes) / (static_cast<double>(ps) / 1e3), busbw);
        out << row;
      }
    }
    return path("reference.csv");
  }

  // The slowest rank's time (ns, as `sim --csv` writes it) of an all-reduce
  // of `bytes` per rank on every NPU of the files given: a separate `sim` run.
  std::string separate_run(std::uint32_t npus, std::uint64_t bytes, const std::string& network,
                           const std::string& system) {
    const std::string wl = path("wl" + std::to_string(npus) + "_" + std::to_string(bytes));
    const std::string csv = path("run.csv");
    const auto run = run_sim("workload gen collectives --npus " + std::to_string(npus) + " --coll allreduce --size " +
                             std::to_string(bytes) + " -o " + wl + " > /dev/null && " + SIM_BINARY + " --workload " +
                             wl + " --network " + network + " --system " + system + " --csv " + csv + " > /dev/null");
    EXPECT_EQ(run.code, 0) << run.output;
    double slowest = 0;
    const std::vector<CsvRow> rows = parse_csv(read(csv), csv);
    for (std::size_t r = 1; r < rows.size(); ++r) slowest = std::max(slowest, std::stod(rows[r].fields[7]));
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.3f", slowest);
    return buf;
  }

  // `sim system gen kPreset --nodes N` into a folder of its own.
  std::string generated(std::uint32_t nodes) {
    const std::string dir = path("gen" + std::to_string(nodes));
    const auto run = run_sim("system gen " + kPreset + " --nodes " + std::to_string(nodes) + " -o " + dir);
    EXPECT_EQ(run.code, 0) << run.output;
    return dir;
  }

  // A YAML text without its comment lines.
  static std::string without_comments(const std::string& text) {
    std::istringstream in(text);
    std::string out, line;
    while (std::getline(in, line)) {
      if (!line.empty() && line[0] != '#') out += line.substr(0, line.find("   #")) + "\n";
    }
    return out;
  }
};

// Fitted on the 2-node rows alone (--filter nodes=2), NCCL's per-call
// overhead is recovered and one value serves both node counts: the 1-node
// rows, held out, are matched too. Every row's simulated time is a separate
// `sim` run's on `sim system gen` at that row's node count, exactly.
TEST_F(PresetSizes, CalibrateFitsOneValueOverEveryNodeCountAndRunsEachRowAtItsOwn) {
  const std::string ref = reference("20us");
  const std::string out = path("fit");
  const auto run =
      run_sim("calibrate " + ref + " --preset " + kPreset + " --fit nccl_overhead --filter nodes=2 -q -o " + out);
  ASSERT_EQ(run.code, 0) << run.output;
  EXPECT_EQ(run.output.find("warning"), std::string::npos) << run.output;
  EXPECT_NE(run.output.find("fitted 1 parameters"), std::string::npos) << run.output;
  EXPECT_NE(run.output.find("  nodes   collective       bytes"), std::string::npos) << run.output;
  EXPECT_NE(run.output.find("wrote " + out + "/errors.csv and, for each node count N (1, 2), " + out +
                            "/nodes-N/{network,system,calibration}.yml"),
            std::string::npos)
      << run.output;
  // The value beside its bounds: "  nccl_overhead        20000.000ns      [100ns, 100us]".
  const std::size_t at = run.output.find("  nccl_overhead ");
  ASSERT_NE(at, std::string::npos) << run.output;
  std::istringstream line(run.output.substr(at, run.output.find('\n', at) - at));
  std::string name, value, min, max;
  line >> name >> value >> min >> max;
  EXPECT_EQ(min + " " + max, "[100ns, 100us]") << run.output;
  EXPECT_NEAR(static_cast<double>(parse_time(value)), 20e6, 20e6 * 0.01) << value;

  const std::vector<CsvRow> rows = parse_csv(read(out + "/errors.csv"), "errors.csv");
  ASSERT_EQ(rows.size(), 5u);
  EXPECT_EQ(rows[0].fields[0], "nodes");
  std::map<std::string, int> roles;
  for (std::size_t r = 1; r < rows.size(); ++r) {
    const auto& f = rows[r].fields;  // nodes,collective,bytes,role,measured_us,simulated_us,...
    const std::uint32_t nodes = static_cast<std::uint32_t>(std::stoul(f[0]));
    EXPECT_EQ(f[3], nodes == 2 ? "fit" : "held-out") << f[0];
    ++roles[f[3]];
    EXPECT_LT(std::abs(std::stod(f[5]) / std::stod(f[4]) - 1), 0.01) << f[0] << " " << f[2];
    // The calibrated folder of that size is the generated one with the fitted overhead.
    const std::string gen = generated(nodes), fitted = out + "/nodes-" + f[0];
    EXPECT_EQ(without_comments(read(fitted + "/network.yml")), without_comments(read(gen + "/network.yml"))) << f[0];
    EXPECT_EQ(read(fitted + "/system.yml").find("overhead=0us"), std::string::npos);
    const std::string separate =
        separate_run(nodes * 8, std::stoull(f[2]), gen + "/network.yml", fitted + "/system.yml");
    char ns[64];
    std::snprintf(ns, sizeof ns, "%.3f", std::stod(f[5]) * 1e3);  // errors.csv: us to the picosecond
    EXPECT_EQ(std::string(ns), separate) << "nodes " << f[0] << ", " << f[2] << " B";
  }
  EXPECT_EQ(roles["fit"], 2);
  EXPECT_EQ(roles["held-out"], 2);
}

// A reference without a `nodes` column: the node count is its ranks over the
// preset's GPUs per node, and --filter nodes=N still selects by it.
TEST_F(PresetSizes, RanksGiveTheNodeCountWhenTheFileHasNoNodesColumn) {
  const std::string ref = reference("20us", false);
  const auto run = run_sim("calibrate " + ref + " --preset " + kPreset +
                           " --fit nccl_overhead --filter nodes=1 -q -o " + path("fit"));
  ASSERT_EQ(run.code, 0) << run.output;
  const std::vector<CsvRow> rows = parse_csv(read(path("fit/errors.csv")), "errors.csv");
  ASSERT_EQ(rows.size(), 5u);
  for (std::size_t r = 1; r < rows.size(); ++r) {
    EXPECT_EQ(rows[r].fields[3], rows[r].fields[0] == "1" ? "fit" : "held-out");
  }
}

// The truth (1 ms per call) lies beyond the overhead's max (100 us): the
// fitted value sits on that bound, and the command says so on stderr.
TEST_F(PresetSizes, AFittedValueOnABoundIsAWarningNamingIt) {
  const std::string ref = reference("1ms");
  const auto run = run_shell(std::string(SIM_BINARY) + " calibrate " + ref + " --preset " + kPreset +
                             " --fit nccl_overhead --filter nodes=2 -q -o " + path("fit") + " 2>&1 >/dev/null");
  ASSERT_EQ(run.code, 0) << run.output;
  EXPECT_EQ(
      run.output.rfind("sim: warning: calibrate: fitted nccl_overhead = 100000.000ns sits on its upper bound 100us "
                       "(bounds [100ns, 100us], " +
                           kPreset + " --nodes 2: calibration.yml:",
                       0),
      0u)
      << run.output;
}

// Rows run side by side on -j threads: the same values, times and output
// as on one.
TEST_F(PresetSizes, TheSameResultsOnAnyNumberOfThreads) {
  const std::string ref = reference("20us");
  CalibrateOptions o;
  o.reference = ref;
  o.preset = kPreset;
  o.fit = {"nccl_overhead"};
  o.filters = {{"nodes", "2"}};
  o.jobs = 1;
  const CalibrationResult one = calibrate(o);
  o.jobs = 3;
  const CalibrationResult three = calibrate(o);
  EXPECT_EQ(one.values, three.values);
  EXPECT_EQ(one.evaluations, three.evaluations);
  ASSERT_EQ(one.rows.size(), three.rows.size());
  for (std::size_t i = 0; i < one.rows.size(); ++i) {
    EXPECT_EQ(one.rows[i].simulated_ns, three.rows[i].simulated_ns) << i;
    EXPECT_EQ(one.rows[i].nodes, three.rows[i].nodes) << i;
  }
  EXPECT_EQ(describe_calibration(one), describe_calibration(three));
  const auto a = run_sim("compare " + ref + " --preset " + kPreset + " -j 1");
  const auto b = run_sim("compare " + ref + " --preset " + kPreset + " -j 3");
  EXPECT_EQ(a.code, 1) << a.output;  // 20 us per call in the reference, none in the preset
  EXPECT_EQ(a.output, b.output);
}

TEST(OnBound, WithinAThousandthOfTheLogRangeOfEitherBound) {
  FreeParameterSpec p;
  p.min = 100;
  p.max = 100000;  // a log range of ln(1000) = 6.91: a margin of 0.69%
  EXPECT_TRUE(on_bound(p, 100));
  EXPECT_TRUE(on_bound(p, 100.6));
  EXPECT_FALSE(on_bound(p, 100.8));
  EXPECT_FALSE(on_bound(p, 3000));
  EXPECT_FALSE(on_bound(p, 99200));
  EXPECT_TRUE(on_bound(p, 99400));
  EXPECT_TRUE(on_bound(p, 100000));
}

// Without a fit: every row simulated at its node count, each time the
// separate run's on `sim system gen`'s files to the picosecond, so a reference
// the preset itself made is matched with no deviation.
TEST_F(PresetSizes, CompareSimulatesEachRowAtItsNodeCount) {
  const std::string ref = reference("0us");
  // The reference's times are the preset's to the picosecond, read back in
  // double precision: deviations of 1e-15, not 0.
  const auto run = run_sim("compare " + ref + " --preset " + kPreset + " --tolerance 1e-9");
  ASSERT_EQ(run.code, 0) << run.output;
  EXPECT_NE(run.output.find("matched on collective, bytes, nodes, npus"), std::string::npos) << run.output;
  EXPECT_NE(run.output.find("4 points compared (0 without a reference point), 0 outside 1e-07%"), std::string::npos)
      << run.output;
  for (const std::uint32_t nodes : {1u, 2u}) {
    const std::string gen = generated(nodes);
    for (const std::uint64_t bytes : {std::uint64_t{1} << 20, std::uint64_t{4} << 20}) {
      const std::string ns = separate_run(nodes * 8, bytes, gen + "/network.yml", gen + "/system.yml");
      const std::string row = "(ALL_REDUCE " + std::to_string(bytes) + " B, nodes=" + std::to_string(nodes) +
                              ", npus=" + std::to_string(nodes * 8) + ")";
      const std::size_t at = run.output.find(row);
      ASSERT_NE(at, std::string::npos) << row << "\n" << run.output;
      const std::size_t start = run.output.rfind('\n', at) + 1;
      std::istringstream line(run.output.substr(start, at - start));
      std::string ours;
      line >> ours;
      EXPECT_EQ(ours, ns) << row;
    }
  }
  const auto two = run_sim("compare " + ref + " --preset " + kPreset + " --filter nodes=2 --tolerance 1e-9");
  EXPECT_EQ(two.code, 0) << two.output;
  EXPECT_NE(two.output.find("2 points compared"), std::string::npos) << two.output;
}

// Bad rows and options: exit 2, one line naming the row or the option; nothing written.
TEST_F(PresetSizes, BadNodeCountsAndPresetsAreErrorsNamingThem) {
  const std::string header = "system,nodes,ranks,collective,size_bytes,time_us,algbw_GBps,busbw_GBps\n";
  const std::string good = "x,1,8,all_reduce,1048576,40,26.21,45.88\n";
  const std::string csv = path("ref.csv");
  const auto expect_error = [&](const std::string& rows, const std::string& message, const std::string& file) {
    std::ofstream(file) << rows;
    for (const std::string& command : {"calibrate " + file + " --preset " + kPreset + " -o " + path("out"),
                                       "compare " + file + " --preset " + kPreset}) {
      const auto run = run_sim(command);
      EXPECT_EQ(run.code, 2) << command << ": " << run.output;
      EXPECT_EQ(run.output, "sim: error: " + message + "\n") << command;
    }
    EXPECT_FALSE(std::filesystem::exists(path("out")));
  };
  for (const std::string n : {"0", "-1", "1.5", "two", ""}) {
    expect_error(header + good + "x," + n + ",8,all_reduce,1048576,40,26.21,45.88\n",
                 csv + ":3: nodes '" + n + "': expected a whole number of nodes from 1 to 65536", csv);
  }
  expect_error(header + good + "x,2,12,all_reduce,1048576,40,26.21,48.06\n",
               csv + ":3: ranks 12 is not a whole number of " + kPreset + " nodes (8 GPUs each)", csv);
  expect_error(
      "system,ranks,collective,size_bytes,time_us,algbw_GBps,busbw_GBps\nx,8,all_reduce,1048576,40,26.21,45.88\n"
      "x,20,all_reduce,1048576,40,26.21,49.81\n",
      csv + ":3: ranks 20 is not a whole number of " + kPreset + " nodes (8 GPUs each)", csv);
  expect_error(header + good + "x,2,8,all_reduce,1048576,40,26.21,45.88\n",
               csv + ":3: nodes 2 and ranks 8 disagree: a " + kPreset + " node has 8 GPUs", csv);
  // nccl-tests output without its '# Rank' lines: no rank count.
  expect_error(
      "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw "
      "#wrong\n"
      "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)\n"
      "     1048576        262144     float     sum      -1    32.91   31.86   55.75      0    32.58   32.18   56.32   "
      "   0\n",
      path("all_reduce_perf.txt") +
          ":3: the row says no node count (a 'nodes' or 'ranks' column, "
          "nccl-tests' '# Rank' lines) to build preset " +
          kPreset + " at",
      path("all_reduce_perf.txt"));
  // A log whose '# Rank' lines put 16 ranks on 4 hosts of 4 GPUs ran as 2
  // nodes of 8: another machine, compared without a word.
  std::string ranks;
  for (int r = 0; r < 16; ++r) {
    ranks += "#  Rank " + std::to_string(r) + " Group  0 Pid  " + std::to_string(41872 + r) + " on   node-0" +
             std::to_string(17 + r / 4) + " device  " + std::to_string(r % 4) + " [0x18] NVIDIA H100 80GB HBM3\n";
  }
  const std::string table =
      "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw "
      "#wrong\n"
      "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)\n"
      "     1048576        262144     float     sum      -1    32.91   31.86   59.74      0    32.58   32.18   60.34   "
      "   0\n";
  expect_error("# Using devices\n" + ranks + table,
               path("all_reduce_perf.txt") + ":20: the '# Rank' lines put 16 ranks on 4 hosts, but " + kPreset +
                   " runs 8 GPUs per node: the curve was measured on another machine",
               path("all_reduce_perf.txt"));
  expect_error(header + good + "x,65,520,all_reduce,1048576,40,26.21,52.33\n",
               csv + ":3: 65 nodes of preset " + kPreset + ": --nodes 65: " + kPreset +
                   " has at most 64 nodes (a rail is one 64-port 400 Gb/s switch, NVIDIA Quantum-2 QM9700 (spec "
                   "sheet); larger clusters: dgx-h100-superpod)",
               csv);
  std::ofstream(csv) << header << good;
  for (const std::string& command :
       {"calibrate " + csv + " --preset p6 -o " + path("out"), "compare " + csv + " --preset p6"}) {
    const auto run = run_sim(command);
    EXPECT_EQ(run.code, 2) << run.output;
    EXPECT_EQ(run.output.rfind("sim: error: unknown preset 'p6' (known: dgx-h100, ", 0), 0u) << run.output;
  }
  const auto both =
      run_sim("calibrate " + csv + " --preset " + kPreset + " --system " + path("x") + " -o " + path("out"));
  EXPECT_EQ(both.code, 2) << both.output;
  const auto neither = run_sim("calibrate " + csv + " -o " + path("out"));
  EXPECT_EQ(neither.code, 2) << neither.output;
  EXPECT_EQ(neither.output,
            "sim: error: calibrate: give --system DIR or --preset NAME (the system the reference's rows run on)\n");
  const auto two_files = run_sim("compare " + csv + " " + csv + " --preset " + kPreset);
  EXPECT_EQ(two_files.code, 2) << two_files.output;
  EXPECT_FALSE(std::filesystem::exists(path("out")));
}

}  // namespace
}  // namespace sim::workflows
