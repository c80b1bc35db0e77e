// Synthetic workloads as per-rank Chakra ETs, for benchmarks and sweeps.
//
//   collectives  every rank runs the same chain of collectives (optionally each
//                preceded by a compute node): the shape of an nccl-tests run
//   chain        every rank runs M dependent compute nodes and nothing else:
//                measures the engine's per-node cost without a network
//   p2p-ring     every rank sends to rank+1 and receives from rank-1, K rounds
//
// All node ids start at 1 and each node depends on its predecessor through
// data_deps, so the graphs are plain chains a reader can check by eye.
// Traces are built one rank at a time so a writer can stream 1,000s of ranks
// without holding every rank's nodes in memory.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "workload/et/et_io.h"
#include "workload/generators/spec/training_spec.h"
#include "workload/rank_graph.h"

namespace sim {

// A collectives microbenchmark's size on N ranks, as NCCL can run it. A
// reduce-scatter's input is recvcount x N elements and an all-to-all's N equal
// parts, so their size (comm_size: the whole buffer) must be a multiple of N
// bytes (the microbenchmarks have no dtype: 1-byte elements). An all-gather's
// size is the per-rank input (its output is N times it) and the other
// collectives take any count, so every size of theirs is a call NCCL can make.
// A size that does not split is refused where it was typed once (the command
// line, a gen:collectives query) and rounded down where a sweep walks sizes
// over rank counts, as nccl-tests rounds its own (per-rank count = count / N,
// truncated; it prints the size it ran).
enum class UnevenSize {
  kRefuse,     // InputError naming the option, the size, the ranks and the nearest sizes that split
  kRoundDown,  // nccl-tests' rule: each such collective runs at the largest multiple of N below the size
};

// Whether `type`'s size must be a multiple of its rank count (REDUCE_SCATTER, ALL_TO_ALL).
bool size_splits_over_ranks(CollectiveType type);
// The size nccl-tests runs when asked for `bytes` of `type` on `npus` ranks:
// rounded down to a multiple of `npus` where the size must split (0 when
// `bytes` < `npus`), else `bytes`.
std::uint64_t nccl_tests_bytes(CollectiveType type, std::uint64_t bytes, std::uint32_t npus);

// "the nearest sizes that split are 999984 B and 1000000 B": the multiples of
// `npus` (> 0) on each side of `bytes` that are sizes (above 0, below 2^63).
std::string nearest_split_sizes(std::uint64_t bytes, std::uint32_t npus);

struct CollectivesSpec {
  std::uint32_t npus = 0;
  std::vector<CollectiveType> collectives;  // run in this order
  std::uint64_t bytes = 0;                  // comm_size of each (ALL_GATHER: per-rank input)
  std::uint64_t compute_micros = 0;         // 0: no compute node before each collective
  UnevenSize uneven = UnevenSize::kRefuse;  // kRoundDown: each collective runs at nccl_tests_bytes
};

// The comm_size collective `i` of `spec` runs at: `bytes`, or with
// kRoundDown its nccl_tests_bytes.
std::uint64_t collective_bytes(const CollectivesSpec& spec, std::size_t i);

// Throws InputError when a collective of `spec` cannot run at its size:
// with kRefuse a size that does not split, with kRoundDown one that rounds
// down to 0 B. `option` names where the size was given ("--size",
// "gen:collectives: size", a spec's key) and `text` is the size as written.
void check_collective_sizes(const CollectivesSpec& spec, const std::string& option, const std::string& text);

struct ChainSpec {
  std::uint32_t npus = 0;
  std::uint32_t nodes = 0;
  std::uint64_t duration_micros = 0;
};

struct P2PRingSpec {
  std::uint32_t npus = 0;
  std::uint64_t bytes = 0;
  std::uint32_t iterations = 1;
};

// One rank's trace; `path` is only recorded in the trace for messages.
EtTrace collectives_trace(const CollectivesSpec& spec, std::uint32_t rank, const std::string& path = "");
EtTrace chain_trace(const ChainSpec& spec, std::uint32_t rank, const std::string& path = "");
EtTrace p2p_ring_trace(const P2PRingSpec& spec, std::uint32_t rank, const std::string& path = "");

// All ranks, indexed by rank.
std::vector<EtTrace> collectives_workload(const CollectivesSpec& spec);
std::vector<EtTrace> chain_workload(const ChainSpec& spec);
std::vector<EtTrace> p2p_ring_workload(const P2PRingSpec& spec);

// `sim workload gen <kind> ...`: options as typed, validated here so the
// messages name the option. Sizes and times take units (core/units.h).
struct WorkloadGenOptions {
  std::string kind;
  std::uint32_t npus = 0;
  std::string collectives = "allreduce";  // comma-separated
  std::string size_text = "1MiB";
  std::string compute_text;  // empty: none
  std::uint32_t nodes = 1000;
  std::string duration_text = "10us";
  std::uint32_t iterations = 1;
  std::string prefix;
  UnevenSize uneven = UnevenSize::kRefuse;  // collectives: a size that does not split over the ranks
};

// The most ranks a microbenchmark may have (the command line's --npus range).
constexpr std::uint32_t kMaxMicrobenchmarkNpus = 1u << 20;

// One microbenchmark, validated: its kind's spec.
struct Microbenchmark {
  std::variant<CollectivesSpec, ChainSpec, P2PRingSpec> spec;

  std::uint32_t npus() const;
  // Every rank runs the same trace (collectives, chain; a ring's ranks send
  // to different peers), so rank 0's trace stands for every rank's.
  bool identical_ranks() const;
  // "1 collective(s) of 1 GiB per rank".
  std::string describe() const;
};

// Checks the options of `kind` and builds its spec; InputError naming the
// option as the user spelled it (`--size` on the command line, `size` in a
// gen:collectives query).
Microbenchmark make_microbenchmark(const WorkloadGenOptions& options,
                                   gen::OptionSpelling spelling = gen::OptionSpelling::kFlags);

// Rank `rank`'s trace.
EtTrace microbenchmark_trace(const Microbenchmark& mb, std::uint32_t rank, const std::string& path = "");

// A microbenchmark named as a workload and generated in memory, no files:
//   gen:collectives?npus=1024&coll=allreduce&size=1GiB[&compute=10us]
//   gen:chain?npus=8[&nodes=1000&duration=10us]
//   gen:p2p-ring?npus=8[&size=1MiB&iterations=1]
// The keys are `sim workload gen`'s options without their dashes (a key the
// kind does not take, an unknown one or one given twice is an InputError).
// Whether `workload` names one of these kinds (its query is checked by parse).
// `uneven` says how a size that does not split over the ranks is taken.
bool is_microbenchmark_workload(std::string_view workload);
Microbenchmark parse_microbenchmark_workload(const std::string& workload, UnevenSize uneven = UnevenSize::kRefuse);

// Writes <prefix>.<rank>.et for every rank (creating the parent folder) and a
// one-line summary to `out`. Returns the exit code; throws InputError for bad
// options or an unwritable path.
int generate_workload(const WorkloadGenOptions& options, std::ostream& out);

}  // namespace sim
