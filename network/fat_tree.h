// A fat tree (folded Clos): NPUs under leaf switches, every leaf of a pod joined
// to every spine of that pod, and, with several pods, spine j of every pod
// joined to the core switches of plane j.
//
// One pod is the two-level leaf-spine; k pods of k/2 leaves x k/2 NPUs with k/2
// spines and k/2 cores per plane is the classic 3-level k-ary fat tree (spines
// are its aggregation switches, leaves its edge switches).
//
// A switch is non-blocking inside, so the links are the whole model of the
// network: each cable is a pair of directed links, laid out arithmetically so
// routing needs no per-pair table.
#pragma once

#include <cstdint>
#include <string>

#include "core/time.h"
#include "network/topology.h"

namespace sim {

// How a route picks among its equal-cost paths. Either way the choice is a
// function of (src, dst) and the message's queue pair (its number and its
// communicator's) alone: the same queue pair always takes the same path
// (Router::ecmp_path).
enum class EcmpRule {
  kHash,             // splitmix64(((qp * npus + src) * npus + dst) ^ mix64(communicator)): as hashing ECMP spreads QPs
  kDestinationModK,  // D-mod-k: dst itself, so all traffic to one NPU converges on one path down
};

struct FatTree {
  std::uint32_t pods;             // 1 for a leaf-spine
  std::uint32_t leaves;           // leaf (edge) switches per pod, >= 1
  std::uint32_t npus_per_leaf;    // >= 1
  std::uint32_t spines;           // spine (aggregation) switches per pod, >= 1
  std::uint32_t cores_per_spine;  // core switches per plane; used only when pods > 1
  BytesPerSecond bandwidth;       // NPU <-> leaf
  Time latency;
  BytesPerSecond uplink_bandwidth;  // every switch <-> switch link
  Time uplink_latency;
  EcmpRule ecmp;
};

// Builds the graph and its router. A route goes up only as far as needed:
// same leaf NPU-leaf-NPU (2 links), same pod through one spine (4), else
// through spine j, a core of plane j and spine j of the other pod (6). With
// v = the ECMP key (hash or dst) and k = v mod (the pair's path count): spine
// j = k mod spines, core = k / spines (= (v / spines) mod cores_per_spine). `label` heads the description; `source` names the file
// in the InputError thrown when the tree is too large to represent.
Topology build_fat_tree(const std::string& source, const std::string& label, const FatTree& tree);

}  // namespace sim
