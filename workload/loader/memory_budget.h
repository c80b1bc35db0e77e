// Before loading a workload: do its graphs fit in the memory this process
// can get? A trace larger than memory must fail with a message naming the
// traces, the estimate and what is available (exit 2), not be killed by the
// kernel's OOM killer halfway through loading.
//
// The estimate is a deliberate *lower bound* from the traces' sizes on disk,
// so a run is refused only when it clearly cannot fit; a run that passes the
// check can still run out (caught as std::bad_alloc by the command line).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace sim {

struct MemoryAvailable {
  std::uint64_t bytes = UINT64_MAX;  // UINT64_MAX: no limit known
  std::string source;                // "MemAvailable", "RLIMIT_AS", "cgroup memory.max"
};

// The least of MemAvailable (/proc/meminfo), RLIMIT_AS minus the address
// space in use, and the cgroup v2 memory.max minus memory.current.
MemoryAvailable available_memory();

// Pieces of available_memory(), on given text (for tests).
// "MemAvailable:   123 kB" line of /proc/meminfo, in bytes; UINT64_MAX if absent.
std::uint64_t parse_meminfo_available(const std::string& meminfo);
// A cgroup v2 memory.max ("max" or a byte count); UINT64_MAX for "max" or bad text.
std::uint64_t parse_cgroup_limit(const std::string& text);

// Lower bound of the memory loading `files` needs, in bytes: the largest
// file (read whole while it is decoded, inflated if gzipped) plus the graphs,
// at least kGraphBytesPerTraceByte per byte of binary trace.
std::uint64_t estimate_load_bytes(const std::vector<std::string>& files);
// Measured graph bytes per trace byte: 0.13 for the point-to-point ring (2026-11-25),
// 0.3 for a COMP chain, 0.2 for a PyTorch trace (docs/benchmarks.md); a low bound
// of the process (below the ring's graphs alone, but the ring's run also holds the
// process base and pending counters: 88 MB for case (p) against an estimate of 58 MB).
inline constexpr double kGraphBytesPerTraceByte = 0.15;

// The same for a workload built in memory (a generator's):
// Bytes per node at least: a rank's graph in memory (2 B shape index, 4 B
// first child, 2 B parent count, 4 B per edge: workload/rank_graph.h) and
// the run's pending count (2 B) with its share of the shapes and names
// (measured: 73 B per node at the peak of a 15-million-node run, loading
// and simulation included), and a rank's decoded trace while it is written
// to a file (a protobuf node with its name and a handful of attributes).
inline constexpr std::uint64_t kGraphBytesPerNode = 16;
inline constexpr std::uint64_t kTraceBytesPerNode = 100;

// Throws InputError (exit 2) naming `what` (the trace folder or prefix), the
// estimate and the available memory when the estimate exceeds it. When
// `sizes` is given, it is left with each file's size in bytes as the check's
// own stat found it for a regular file, or -1 (no stat made, or not a regular
// file), so that the loader need not stat the files again (FileBuffer::read_sized).
void check_memory_for_load(const std::vector<std::string>& files, const std::string& what,
                           std::vector<std::int64_t>* sizes = nullptr);

}  // namespace sim
