// The one way `sim` writes a set of per-rank Chakra ETs (`-o PREFIX`):
// workload gen, collective gen/synth/import, workload import pytorch.
//
// A prefix is a path and the start of a file name: `-o wl/job` writes
// wl/job.0.et, wl/job.1.et, ... Refused (InputError, one line): an empty
// prefix, one ending in '/', "-", and one naming anything that exists (a
// folder, a file, a device, a FIFO): `--workload PREFIX` would read that
// instead of the rank files. A missing folder is created.
//
// The set written is the set that runs: every file the loader would take as
// a rank of the prefix (<prefix>.<N>.et, .et.gz, .json) that this set does
// not replace is removed when the first rank is written, and reported.
// Each file is written atomically; rank 0 is held in its temporary file
// until every other rank is written, so a write cut short (an error, a
// signal) leaves no rank 0 and nothing the loader would run. On an error
// the files written so far are removed as well.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "workload/et/et_io.h"

namespace sim {

class OutputFile;

// Throws InputError when `prefix` is not a plain output prefix (see above);
// `option` names the flag in the message. Creates the prefix's folder.
void prepare_rank_prefix(const std::string& prefix, const std::string& option = "-o");

class RankSetWriter {
 public:
  // Checks and prepares the prefix (prepare_rank_prefix); writes nothing yet.
  RankSetWriter(std::string prefix, std::uint32_t ranks, const std::string& option = "-o");
  ~RankSetWriter();
  RankSetWriter(const RankSetWriter&) = delete;
  RankSetWriter& operator=(const RankSetWriter&) = delete;

  std::string path(std::uint32_t rank) const { return prefix_ + "." + std::to_string(rank) + ".et"; }
  // Writes one rank's trace; safe from several threads for distinct ranks.
  // Returns the bytes written.
  std::uint64_t write(std::uint32_t rank, const EtTrace& trace);
  // Puts rank 0 in place; InputError when a rank was never written.
  void commit();

  std::uint32_t ranks() const { return ranks_; }
  std::uint64_t bytes() const { return bytes_.load(); }
  // The earlier files removed, as (rank, path).
  const std::vector<std::pair<int, std::string>>& removed() const { return stale_; }
  // "; removed 4 rank files of an earlier write of wl/job (ranks 4-7)", or "".
  std::string removed_note() const;

 private:
  void clear_earlier();
  // Once, with the first rank's size: InputError when ranks x that size
  // cannot fit in the free space of the prefix's file system.
  void check_space(std::uint64_t rank_bytes);
  void discard() noexcept;

  std::string prefix_;
  std::string option_;  // "-o", as the command names it
  std::uint32_t ranks_;
  std::vector<std::pair<int, std::string>> stale_;  // listed by the constructor
  std::once_flag cleared_, space_checked_;
  std::vector<char> written_;  // per rank; distinct ranks are distinct bytes
  std::unique_ptr<OutputFile> rank0_;
  std::atomic<std::uint64_t> bytes_{0};
  std::atomic<bool> started_{false};  // earlier files removed, new ones being written
  bool committed_ = false;
};

}  // namespace sim
