// A sweep spec (`sim sweep SPEC.yml`): base inputs and the axes to vary.
//
//   base:
//     microbenchmark: {npus: 8, collectives: [allreduce], size: 1MiB}   # or
//     workload: et/prefix            # Chakra ETs (folder or prefix), or a
//       # generated iteration: 'gen:transformer?model=llama3-8b&parallel=...'
//     network: ../ring8.yml          # paths are relative to the spec file
//     system: ../system/h100_like.yml   # optional
//     backend: analytical            # optional
//     collective: [allreduce=ring]   # optional, --collective values
//   axes:                            # each a non-empty list of values
//     network.bandwidth: [25GB/s, 50GB/s, 100GB/s]   # any key of the network
//     system.collective.chunks: [1, 4]               #   or system file by path
//     system.active-chunks-per-dimension: [1, 2]     #   (ASTRA-sim's JSON too)
//     size: [64KiB, 1MiB]            # microbenchmark size (and npus)
//     collective: [allreduce=ring, allreduce=direct]  # a value may be a list;
//       # ET prefixes, MSCCL-IR .xml files, and algorithms each point makes:
//       # allreduce=gen:ring, allgather=synth (workflows/sweep/generated_algorithm.h)
//     backend: [analytical, flow]
//     network: [../ring8.yml, ../switch8.yml]         # whole files (workload, system too)
//     workload.parallel: ['tp=8,pp=4,dp=4', 'tp=4,pp=8,dp=4']  # a key of a generated
//       # workload's query (model, global-batch, schedule, seq, ...): set or replaced
//   zip: [[network.bandwidth, size]] # optional: these advance together
//
// Points are the cartesian product of the axes (first axis slowest), a zip
// group counting as one axis at the place of its first member. Unknown keys,
// empty or duplicated axes, unequal zip lengths are InputErrors naming the
// spec file and line; a key path naming no key is found when inputs are read
// (workflows/sweep/point_inputs.h), also naming the spec line.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <yaml-cpp/yaml.h>

namespace sim::workflows {

struct Microbenchmark {
  std::uint32_t npus = 0;
  std::vector<std::string> collectives;  // names as written (allreduce, all_gather, ...)
  std::string size;                      // as written ("1MiB"); parsed when run
};

// What one point runs: the base with its axis values applied.
struct PointSettings {
  std::string workload;  // resolved path, or a generated workload as written; empty with a microbenchmark
  std::optional<Microbenchmark> microbenchmark;
  std::string network;   // resolved path
  std::string system;    // resolved path, empty: defaults
  std::string backend;   // empty: the system config's (analytical)
  std::vector<std::string> collectives;  // --collective values, ET paths resolved
  // Key-path overrides of the network / system file: (path components, value, spec line).
  struct Override {
    std::vector<std::string> path;
    YAML::Node value;
    int line = 0;
    std::string axis;
  };
  std::vector<Override> network_overrides, system_overrides;
};

struct Axis {
  std::string name;                 // "network.bandwidth", "size", ...
  int line = 0;                     // in the spec file
  std::vector<YAML::Node> values;
  std::vector<std::string> labels;  // values as written in results ("[8, 8]" for a list)
};

struct SweepSpec {
  std::string path;    // the spec file as given
  std::string folder;  // relative paths resolve against it
  std::string digest;  // SHA-256 of the spec text: shards of one sweep must agree
  PointSettings base;
  std::vector<Axis> axes;
  std::vector<std::vector<std::size_t>> zips;  // groups of axis indices
};

// One point: the index of each axis's value, and its settings.
struct SweepPoint {
  std::size_t index = 0;
  std::vector<std::size_t> choice;  // per axis
  PointSettings settings;
};

// Throws InputError naming the file and line.
SweepSpec load_sweep_spec(const std::string& path);
SweepSpec parse_sweep_spec(const std::string& yaml_text, const std::string& path);

// Every point, in a fixed order: the first axis (or zip group) varies slowest.
std::vector<SweepPoint> expand_points(const SweepSpec& spec);

}  // namespace sim::workflows
