// The collective checker's data check for MSCCL-IR imports
// (EtAlgorithm::msccl): where every rank's input starts and what every rank's
// output must end up holding.
//
// A rank's buffers i (input), o (output), s (scratch) and t (the transient
// results of fused rrs steps) are laid out one after the other as slots of
// ChunkHoldings; an in-place algorithm's input and output share slots (for
// all-gather the input is block r of the output, for reduce-scatter the
// output is block r of the input). A contribution is (rank j, input chunk c),
// so a chunk moved to the wrong place is caught, not only a missing rank.
// Promises, with B = the input chunks per rank over N for the block
// collectives:
//   all-reduce      output chunk c holds (j, c) of every rank j
//   all-gather      output chunk j*B+c holds (j, c) alone
//   reduce-scatter  rank r's output chunk c holds (j, r*B+c) of every rank j
//   all-to-all      rank r's output chunk j*B+c holds (j, r*B+c) alone: the
//                   transpose of the ranks' input blocks
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "system/program/chunk_holdings.h"
#include "system/program/et_algorithm.h"

namespace sim {

class MscclDataModel {
 public:
  // The model of `algo` on its n ranks, or nullopt with `why` (the layout
  // does not fit the collective, or the collective is not modelled).
  // InputError naming the file, rank and node for an op whose chunk range
  // lies outside its buffer (a hand-edited ET). nullopt too when the ranks'
  // bitsets would pass `max_bytes`.
  static std::optional<MscclDataModel> make(const EtAlgorithm& algo, std::uint32_t n, std::uint64_t max_bytes,
                                            std::string& why);

  std::uint64_t slots() const { return slots_; }
  std::uint32_t ids() const { return n_ * in_; }
  // "" when chunks [off, off + cnt) lie inside buffer `buf`, else why not.
  std::string outside(char buf, std::int64_t off, std::int64_t cnt) const;
  // The slot of chunk `off` of buffer `buf` ('i', 'o', 's', 't') on `rank`
  // (make() has checked every op's operands).
  std::uint64_t slot(std::uint32_t rank, char buf, std::int64_t off) const;

  // Every rank's input, each chunk its own contribution.
  void fill(ChunkHoldings& d) const;
  // "" when every rank's output holds what the collective promises (then
  // `note` says so), else the first rank and chunk that does not.
  std::string verify(const ChunkHoldings& d, std::string& note) const;

 private:
  std::string describe(std::uint32_t id) const;
  // The contributions rank r's output chunk q must hold: ids [first, first + step*count) by step.
  struct Want {
    std::uint32_t first, step, count;
  };
  Want want(std::uint32_t r, std::uint64_t q) const;

  CollectiveType type_ = CollectiveType::kAllReduce;
  std::uint32_t n_ = 0;
  std::uint32_t in_ = 0;         // input chunks per rank
  std::uint64_t out_ = 0;        // output chunks per rank
  bool single_ = false;          // input and output are one buffer (in place)
  std::int64_t i_ = 0, o_ = 0;   // chunks of i and o
  std::uint64_t base_s_ = 0, base_t_ = 0, slots_ = 0;
};

}  // namespace sim
