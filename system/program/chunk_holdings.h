// The collective checker's data model: per rank and chunk of the collective
// buffer, the set of ranks whose contributions that rank holds (one bit per
// rank). Messages carry snapshots of these sets (ChunkBits, `words()` words
// per chunk); a receive overwrites, a reduce merges (and reports a
// contribution reduced twice), a barrier's "heard from" sets unite.
// docs/collectives.md describes the rules the checker applies with it.
#pragma once

#include <algorithm>
#include <bit>
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

namespace sim {

using ChunkBits = std::vector<std::uint64_t>;

// Per rank and chunk, the set of ranks (contributions) whose data that rank holds.
class ChunkHoldings {
 public:
  static constexpr std::uint32_t kNone = 0xffffffffu;

  // `ids`: how many contributions a chunk can hold (default: one per rank;
  // an MSCCL-IR import's check tells every rank's input chunks apart).
  ChunkHoldings(std::uint32_t ranks, std::uint64_t chunks, std::uint32_t ids = 0)
      : n_(ids ? ids : ranks), words_((n_ + 63) / 64), chunks_(chunks), held_(ranks, ChunkBits(chunks * words_, 0)) {}

  std::uint32_t ranks() const { return static_cast<std::uint32_t>(held_.size()); }
  std::uint32_t ids() const { return n_; }
  std::uint64_t chunks() const { return chunks_; }
  std::uint64_t* at(std::uint32_t rank, std::uint64_t chunk) { return &held_[rank][chunk * words_]; }
  const std::uint64_t* at(std::uint32_t rank, std::uint64_t chunk) const { return &held_[rank][chunk * words_]; }
  void add(std::uint32_t rank, std::uint64_t chunk, std::uint32_t contributor) {
    at(rank, chunk)[contributor / 64] |= 1ull << (contributor % 64);
  }
  std::uint32_t count(std::uint32_t rank, std::uint64_t chunk) const {
    std::uint32_t c = 0;
    for (std::uint32_t w = 0; w < words_; ++w) c += static_cast<std::uint32_t>(std::popcount(at(rank, chunk)[w]));
    return c;
  }
  bool full(std::uint32_t rank, std::uint64_t chunk) const { return count(rank, chunk) == n_; }
  // Lowest contributor missing from (rank, chunk), or kNone.
  std::uint32_t first_missing(std::uint32_t rank, std::uint64_t chunk) const {
    for (std::uint32_t w = 0; w < words_; ++w) {
      const std::uint64_t missing = ~at(rank, chunk)[w];
      if (missing == 0) continue;
      const std::uint32_t r = w * 64 + static_cast<std::uint32_t>(std::countr_zero(missing));
      return r < n_ ? r : kNone;
    }
    return kNone;
  }
  bool holds_only(std::uint32_t rank, std::uint64_t chunk, std::uint32_t who) const {
    for (std::uint32_t w = 0; w < words_; ++w) {
      const std::uint64_t want = w == who / 64 ? 1ull << (who % 64) : 0;
      if (at(rank, chunk)[w] != want) return false;
    }
    return true;
  }

  // The chunks [idx, idx+cnt) (wrapping like EtProgram) as a message payload.
  ChunkBits snapshot(std::uint32_t rank, std::uint64_t idx, std::uint64_t cnt) const {
    ChunkBits out(cnt * words_);
    for (std::uint64_t i = 0; i < cnt; ++i) {
      std::copy_n(at(rank, (idx + i) % chunks_), words_, &out[i * words_]);
    }
    return out;
  }
  void replace(std::uint32_t rank, std::uint64_t idx, const ChunkBits& payload) {
    const std::uint64_t cnt = payload.size() / words_;
    for (std::uint64_t i = 0; i < cnt; ++i) std::copy_n(&payload[i * words_], words_, at(rank, (idx + i) % chunks_));
  }
  // Union without the twice check (a barrier's "heard from" sets).
  void unite(std::uint32_t rank, std::uint64_t idx, const ChunkBits& payload) {
    const std::uint64_t cnt = payload.size() / words_;
    for (std::uint64_t i = 0; i < cnt; ++i) {
      std::uint64_t* mine = at(rank, (idx + i) % chunks_);
      for (std::uint32_t w = 0; w < words_; ++w) mine[w] |= payload[i * words_ + w];
    }
  }
  // Merges; returns (chunk, contributor) of the first overlap instead of merging it.
  std::optional<std::pair<std::uint64_t, std::uint32_t>> merge(std::uint32_t rank, std::uint64_t idx,
                                                               const ChunkBits& payload) {
    const std::uint64_t cnt = payload.size() / words_;
    for (std::uint64_t i = 0; i < cnt; ++i) {
      const std::uint64_t chunk = (idx + i) % chunks_;
      std::uint64_t* mine = at(rank, chunk);
      for (std::uint32_t w = 0; w < words_; ++w) {
        const std::uint64_t overlap = mine[w] & payload[i * words_ + w];
        if (overlap != 0) return std::pair{chunk, w * 64 + static_cast<std::uint32_t>(std::countr_zero(overlap))};
      }
      for (std::uint32_t w = 0; w < words_; ++w) mine[w] |= payload[i * words_ + w];
    }
    return std::nullopt;
  }

 private:
  std::uint32_t n_, words_;
  std::uint64_t chunks_;
  std::vector<ChunkBits> held_;
};

}  // namespace sim
