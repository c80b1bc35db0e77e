// Which collective program runs a COMM_COLL node.
//
// Native algorithms are a table of named generators, each declaring the
// collective types it supports and the parameters it takes:
//
//   ring              ALL_REDUCE REDUCE_SCATTER ALL_GATHER ALL_TO_ALL   chunks
//   direct            every type                                        chunks, window
//   halvingDoubling   ALL_REDUCE REDUCE_SCATTER ALL_GATHER              chunks
//   doubleBinaryTree  ALL_REDUCE                                        chunks
//   binaryTree        ALL_REDUCE REDUCE BROADCAST                       chunks
//   astrasimTree      ALL_REDUCE                                        chunks
//     (ASTRA-sim's doubleBinaryTree: one whole-chunk tree per chunk, chunks
//     alternating between two trees; with astrasim_quirks, `doubleBinaryTree`
//     runs as this one. system/collectives/astrasim_tree.h)
//
// A choice is written `name` or `name:key=value[,key=value]`, e.g.
// `direct:window=4` or `ring:chunks=4`, in the system config
// (collective.algorithms.all_reduce: halvingDoubling) or on the command line
// (--collective allreduce=direct:window=4). Anything else must be a Chakra ET
// prefix or folder (an algorithm injected as ETs); a name that is neither is
// an error listing the native names. Defaults (no choice): ring for
// ALL_REDUCE, REDUCE_SCATTER, ALL_GATHER, ALL_TO_ALL (hierarchical, a ring per
// dimension, when the topology has several dimensions and the group spans two
// or more of them); binaryTree for REDUCE and BROADCAST; direct for GATHER,
// SCATTER and BARRIER. REDUCE_SCATTER_BLOCK
// runs as REDUCE_SCATTER. Programs are cached on the whole request (type,
// bytes, chunks and the group's members), so instances of one shape share one.
//
// Hierarchical (multi-dimensional) choices compose one native algorithm per
// topology dimension (system/collectives/hierarchical.h): a comma list
// `ring,direct:window=4,halvingDoubling` (an item `key=value` belongs to the
// algorithm before it), optionally headed by `hierarchical[:key=value...]`
// with optimization=baseline|localBWAware, active_chunks=n (0 = unlimited),
// dimension_queue=0|1 (the active_chunks window per dimension, ASTRA-sim's)
// and chunks=k; `hierarchical` alone runs the type's default algorithm on
// every dimension, and a list of one applies to every dimension. In the
// system config a YAML list is the same choice. docs/collectives.md.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "network/topology.h"
#include "system/collectives/algorithm_context.h"
#include "system/collectives/nccl/programs/nccl_p2p.h"
#include "system/program/collective_program.h"
#include "system/program/et_algorithm.h"
#include "system/config/system_config.h"

namespace sim {

// One collective to run.
struct CollectiveRequest {
  CollectiveType type = CollectiveType::kAllReduce;
  std::uint64_t bytes = 0;
  // Global ranks of the group, in group-position order (never null).
  std::shared_ptr<const std::vector<std::uint32_t>> members;
  std::uint32_t chunks = 1;  // the config's default; an algorithm's chunks= parameter overrides it
  // The workload node that issued it: collective.per_node choices are keyed on it.
  std::optional<std::uint64_t> node_id;
  std::uint32_t group_size() const { return static_cast<std::uint32_t>(members->size()); }
};

using AlgorithmParams = std::map<std::string, std::uint64_t>;

struct NativeAlgorithm {
  std::string name;
  std::vector<CollectiveType> types;
  std::vector<std::string> params;  // accepted parameter names
  std::function<std::shared_ptr<const CollectiveProgram>(CollectiveType, std::uint32_t group_size,
                                                         std::uint64_t bytes, std::uint32_t chunks,
                                                         const AlgorithmParams&)>
      make;
  // Topology-aware algorithms (nccl) also take the group's context
  // (system/collectives/algorithm_context.h); the registry prefers this when set.
  std::function<std::shared_ptr<const CollectiveProgram>(CollectiveType, std::uint64_t bytes, std::uint32_t chunks,
                                                         const AlgorithmParams&, const AlgorithmContext&)>
      make_in_context = {};
  // Parameters whose values are words (nccl's algo=ring): their code; throws InputError. Null: numbers only.
  std::function<std::uint64_t(const std::string& key, const std::string& value)> value_of = {};
  // Checks the parameters against the collective type when a choice is read
  // (keys that never apply to it); throws InputError. Null: none.
  std::function<void(CollectiveType, const AlgorithmParams&)> check = {};
  bool supports(CollectiveType type) const;
};

const std::vector<NativeAlgorithm>& native_algorithms();
const NativeAlgorithm* find_native_algorithm(const std::string& name);
std::string native_algorithm_names();  // "ring, direct, ..."
const char* default_algorithm(CollectiveType type);
// REDUCE_SCATTER_BLOCK runs as REDUCE_SCATTER; every other type as itself.
CollectiveType normalized(CollectiveType type);

// A parsed choice: a native algorithm with parameters, a hierarchical
// composition of them, or ETs.
struct DimensionChoice {
  const NativeAlgorithm* native = nullptr;
  AlgorithmParams params;
};
struct AlgorithmChoice {
  const NativeAlgorithm* native = nullptr;
  AlgorithmParams params;  // hierarchical: optimization (0 baseline, 1 localBWAware), active_chunks, chunks
  std::string et_source;   // when neither native nor hierarchical
  // `<prefix>@<size>`: the collective size the ETs were written for (their
  // message sizes scale by S / size); overrides the size the ETs record.
  std::optional<std::uint64_t> et_written_size;
  bool hierarchical = false;
  // Hierarchical: one per topology dimension, or one for all; empty: the type's default on all.
  std::vector<DimensionChoice> dims;
};
// Parses `text` for `type` (throws InputError: unknown parameter, a type the
// algorithm does not support, or a name that is neither native nor an
// existing ET prefix/folder, listing the native names).
AlgorithmChoice parse_algorithm_choice(const std::string& text, CollectiveType type);
// Whether `text` names a native algorithm (with or without parameters).
bool names_native_algorithm(const std::string& text);

// A hierarchical program over the group `members` (global ranks) of a
// topology whose dimensions have sizes `topology_dims` (NPU id = mixed-radix
// address, dimension 0 fastest; empty: one dimension of all NPUs). The
// group's dimensions are those along which its members vary; a group that is
// not a full grid of them runs the first listed algorithm flat. `optimization`
// and `active` are the defaults the choice's parameters override.
// `astrasim_quirks`: every phase program runs ASTRA-sim's way (all-to-all one
// block per message, halvingDoubling's first reduction free, `phase_tail` at
// the end of each phase: its endpoint delay).
// `costs`: the topology's dimensions (kind, size, bandwidth, latency); when
// given, a dimension's latency and bandwidth replace the fixed estimates
// (500 ns, 50 GB/s) its dimension_queue ordering uses.
// `topology`: what a topology-aware algorithm (nccl) on a dimension sees: the
// context of its line (its members, the topology, the capabilities no other
// line shares; make_line_context), built for the line through grid index 0
// and run on every line with its switches translated. Null: no topology
// (nccl then sees one node without a switch).
std::shared_ptr<const CollectiveProgram> make_hierarchical_program(
    const AlgorithmChoice& choice, CollectiveType type, std::uint64_t bytes, std::uint32_t chunks,
    const std::vector<std::uint32_t>& members, const std::vector<std::uint32_t>& topology_dims,
    bool baseline, std::uint32_t active, bool dimension_queue = false, bool astrasim_quirks = false,
    Time phase_tail = 0, const std::vector<TopologyDimension>* costs = nullptr, const Topology* topology = nullptr,
    GpuMemory memory = {});

// A native program (throws InputError when the algorithm lacks the type).
std::shared_ptr<const CollectiveProgram> make_native_program(const NativeAlgorithm& algo, const AlgorithmParams& params,
                                                             CollectiveType type, std::uint32_t group_size,
                                                             std::uint64_t bytes, std::uint32_t chunks);

// ASTRA-sim's chunk sizes of a collective of `bytes`: collective.dataset_splits
// (at least 1) near-equal chunks, each bumped to `group_size` bytes when
// smaller (ASTRA-sim's size-enlargement rule), except for all-gather.
std::vector<std::uint64_t> dataset_split_sizes(const SystemConfig& config, CollectiveType type,
                                               std::uint32_t group_size, std::uint64_t bytes);

// The program for `bytes` as the config's ASTRA-sim options shape it:
// make(bytes) itself when none is set; otherwise a ChunkedProgram of
// collective.dataset_splits chunks (each make(chunk bytes), with ASTRA-sim's
// size-enlargement rule), collective.active_chunks in flight, the endpoint
// delay closing each chunk, and with astrasim_quirks the first
// reduction of each chunk free when `halving_doubling` (set by make()).
std::shared_ptr<const CollectiveProgram> with_dataset_splits(
    const SystemConfig& config, CollectiveType type, std::uint32_t group_size, std::uint64_t bytes,
    const std::function<std::shared_ptr<const CollectiveProgram>(std::uint64_t)>& make, bool& halving_doubling);

// An injected algorithm whose ETs record no size (GlobalMetadata
// collective_size or `<prefix>@<size>`) and no chunk attributes runs its
// messages as written; it must then fit: its sends must total at least what
// any algorithm of `type` on its ranks must send for `bytes` (2(N-1)S for an
// all-reduce, N(N-1)S all-gather, (N-1)S reduce-scatter, all-to-all,
// broadcast, reduce). Throws InputError otherwise, saying how to give the size.
void check_injected_fits(const EtAlgorithm& algo, CollectiveType type, std::uint64_t bytes);

class AlgorithmRegistry {
 public:
  // Loads an injected algorithm (load_et_algorithm); a sweep passes one that
  // shares each algorithm, read once, among the simulations that use it.
  using EtLoader = std::function<std::shared_ptr<const EtAlgorithm>(const std::string& source, CollectiveType type)>;

  // Parses every choice in the config and loads injected ETs (throws InputError).
  // Hierarchical choices place groups on `topology_dims` (Topology::dims()).
  // `stacked_dimensions`: the topology is a stack of dimensions (rings,
  // switches, ...; not a fat tree's levels), where a collective with no
  // algorithm named runs hierarchically (default_is_hierarchical).
  explicit AlgorithmRegistry(const SystemConfig& config, std::vector<std::uint32_t> topology_dims = {},
                             EtLoader load = nullptr, bool stacked_dimensions = false);

  // The program for a collective; never null. Throws InputError when an
  // injected algorithm's rank count differs from the group size.
  std::shared_ptr<const CollectiveProgram> program_for(const CollectiveRequest& request);

  // A COMM_SEND / COMM_RECV pair from NPU `src` to NPU `dst` as NCCL's send
  // and receive run it (collective.algorithms.send_recv, docs/nccl.md): its
  // point-to-point model, and whether the pair is on two nodes. Null when the
  // config names none (the pair is one message on the network).
  struct PointToPoint {
    nccl::P2pModel model;
    bool across = false;
  };
  const PointToPoint* point_to_point(std::uint32_t src, std::uint32_t dst);

  // The topology the groups run on: topology-aware algorithms (nccl) see it
  // through an AlgorithmContext, hierarchical ones take each dimension's
  // bandwidth and latency from it. Null (the default): neither.
  void set_topology(const Topology* topology) { topology_ = topology; }

 private:
  struct Chosen {
    AlgorithmChoice choice;
    std::shared_ptr<const EtAlgorithm> injected;
  };
  Chosen choose(const std::string& text, CollectiveType type) const;
  // With no algorithm named: whether the request runs the hierarchical
  // default (a ring per dimension), i.e. the topology has several dimensions,
  // the type has a hierarchical form and the group spans two or more of them.
  bool default_is_hierarchical(const CollectiveRequest& req) const;
  // The request's choice (its node's, else its type's; null: the default)
  // and an id for cache keys (0: by type; k > 0: the k-th per-node choice).
  std::pair<const Chosen*, std::uint32_t> chosen_for(const CollectiveRequest& req);
  // Where the request's algorithm was chosen, with its text ("--collective
  // allreduce=ring,direct: collective algorithm 'ring,direct'"), for errors
  // found only when a group runs it; empty when nothing says.
  std::string chosen_where(const CollectiveRequest& req, std::uint32_t choice_id) const;

  const SystemConfig& config_;
  std::vector<std::uint32_t> topology_dims_;
  EtLoader load_;  // null: load_et_algorithm
  bool stacked_dimensions_ = false;
  std::map<CollectiveType, Chosen> chosen_;
  struct PerNode {
    Chosen chosen;
    std::uint32_t id = 0;
  };
  std::map<std::pair<std::uint64_t, CollectiveType>, PerNode> per_node_;
  // Fast path keyed on the members' identity (a communicator's vector lives
  // as long as the simulation); the content key makes groups with equal
  // members share a program.
  std::map<std::tuple<int, std::uint64_t, std::uint32_t, std::uint32_t, const void*>,
           std::shared_ptr<const CollectiveProgram>>
      by_ptr_;
  std::map<std::tuple<int, std::uint64_t, std::uint32_t, std::uint32_t, std::vector<std::uint32_t>>,
           std::shared_ptr<const CollectiveProgram>>
      cache_;
  std::vector<std::shared_ptr<const std::vector<std::uint32_t>>> keep_;  // keeps by_ptr_ keys valid
  const Topology* topology_ = nullptr;
  std::map<std::vector<std::uint32_t>, std::shared_ptr<const AlgorithmContext>> contexts_;  // per group
  std::optional<AlgorithmParams> point_to_point_;  // algorithms.send_recv's nccl keys
  std::map<std::pair<std::uint32_t, std::uint32_t>, PointToPoint> pairs_;
  std::shared_ptr<const AlgorithmContext> context_for(const std::shared_ptr<const std::vector<std::uint32_t>>& members);
  // The GPUs' memory from the config's compute section (reductions' cost).
  GpuMemory gpu_memory() const { return {config_.compute_memory_bandwidth, config_.compute_l2_bytes}; }
};

}  // namespace sim
