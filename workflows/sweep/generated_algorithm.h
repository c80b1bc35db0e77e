// Collective algorithms a sweep point makes itself before it runs, named in a
// --collective value of the spec instead of an ET prefix written beforehand:
//
//   allreduce=gen:ring                 `sim collective gen ring --coll allreduce --npus N`
//   allreduce=gen:direct:window=4      (N: the point's rank count; written for 1MiB, runs rescale)
//   allgather=synth                    `sim collective synth --coll allgather --network NET`
//   allgather=synth:chunks=2,seed=3,size=1MiB   (NET: the point's network, overrides applied)
//
// WHY a step inside the point rather than files made by hand: the synthesized
// algorithm depends on the topology, so a sweep over networks needs one per
// network; and a point whose result is cached never generates anything. The
// ETs are written with the same functions as the two commands, once per
// distinct algorithm, to OUTDIR/generated/<digest>/<type>.{r}.et (a temporary
// folder renamed into place; the folder's name digests what determines them,
// the sim version included), and then run as any injected ET prefix does: the
// numbers equal those of the command-line workflow. The point's key needs no
// file digest: the value, the network text, the rank count and the sim
// version determine the files.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "network/topology.h"
#include "workload/rank_graph.h"  // CollectiveType

namespace sim::workflows {

struct GeneratedAlgorithm {
  enum class Kind { kGen, kSynth };
  Kind kind = Kind::kGen;
  std::string type_text;  // as written before '=' ("allreduce")
  CollectiveType type = CollectiveType::kAllReduce;
  std::string algorithm;  // gen: a native choice ("direct:window=4")
  std::uint32_t chunks = 1;        // synth
  std::uint64_t seed = 1;          // synth
  std::string size_text = "1MiB";  // synth: the size link costs are priced at
};

// The value's generated algorithm, or nullopt when it names none (a native
// choice, an ET prefix, an MSCCL-IR file). Throws InputError for a bad one:
// no collective type, an unknown algorithm or parameter, a type the
// synthesizer does not write.
std::optional<GeneratedAlgorithm> parse_generated_algorithm(const std::string& option);

// Writes the ETs under `folder` (once: an existing result is reused) and
// returns their prefix. `npus`: the point's ranks (gen); `topology` and
// `network_digest`: the point's network (synth).
std::string write_generated_algorithm(const GeneratedAlgorithm& g, std::uint32_t npus, const Topology& topology,
                                      const std::string& network_digest, const std::string& folder);

// The folder name write_generated_algorithm() uses: a digest of what
// determines the files (the value, the rank count or network, the sim version).
std::string generated_algorithm_id(const GeneratedAlgorithm& g, std::uint32_t npus, const std::string& network_digest);

}  // namespace sim::workflows
