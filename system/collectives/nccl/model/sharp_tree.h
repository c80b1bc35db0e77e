// The fabric's reducing switches above the nodes as NCCL's CollNet uses
// them (InfiniBand SHARP): per rank of the group, the switches its NIC's rail
// reaches, one per fabric level that reduces, the lowest first.
//
// One level (the rails' switch joins one GPU of every node): the rank
// uploads its buffer to it and gets every node's sum back. Several levels, as
// in a dimension stack whose leaf and spine both reduce (each rank has a link
// to the switch of each level, the switch of level k joining the ranks of one
// rail that differ only in that level's coordinate): the levels below the top
// reduce-scatter (each rank owns one part of its buffer per level, the
// switch sums each part into its owner), the top level all-reduces the part
// a rank owns, and the levels below multicast the totals back, the top's
// lowest neighbour first. Every rank's NIC carries its buffer up once and the
// total down once, and its parts at the levels above.
#pragma once

#include <cstdint>
#include <vector>

#include "system/collectives/algorithm_context.h"

namespace sim::nccl {

struct SharpTree {
  // levels[k][p]: position p's switch at level k.
  std::vector<std::vector<NodeId>> levels;
  // index[k][p]: p's place among the group's members under its level-k
  // switch (in group order); under(k, p): those members, in that order.
  std::vector<std::vector<std::uint32_t>> index;
  std::vector<std::vector<std::uint32_t>> group;               // [k][p]: which of groups[k]
  std::vector<std::vector<std::vector<std::uint32_t>>> groups;  // [k][switch]: its members

  bool empty() const { return levels.empty(); }
  std::size_t depth() const { return levels.size(); }
  const std::vector<std::uint32_t>& under(std::size_t k, std::uint32_t p) const { return groups[k][group[k][p]]; }
};

// The group's SHARP tree: every member's switches above its node's, in link
// order (a dimension stack's: dimension order). Empty unless every one of
// them reduces (in_network_reduction on that dimension), each level's
// switches have the same number of members, every member under a switch is
// on another node but the same rail and agrees with the others on its place
// at every other level, and the levels' fans multiply to the number of nodes
// (each rank's rail reaches every node once). A level with one member per
// switch (a group under one leaf) is left out. Empty on one node.
SharpTree sharp_tree(const AlgorithmContext& ctx);

// The deepest tree the programs' message tags hold.
inline constexpr std::size_t kMaxSharpLevels = 4;

}  // namespace sim::nccl
