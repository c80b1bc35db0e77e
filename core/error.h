// Errors users see, each tied to a process exit code.
//
//   0 success, 2 bad usage / config / input, 3 the simulation cannot complete.
// Messages name the file, YAML key, rank or node id at fault.
#pragma once

#include <stdexcept>
#include <string>

namespace sim {

enum ExitCode : int { kExitOk = 0, kExitBadInput = 2, kExitIncomplete = 3 };

class SimError : public std::runtime_error {
 public:
  SimError(int exit_code, const std::string& what) : std::runtime_error(what), exit_code_(exit_code) {}
  int exit_code() const { return exit_code_; }

 private:
  int exit_code_;
};

// Bad usage, config or input file (exit 2).
class InputError : public SimError {
 public:
  explicit InputError(const std::string& what) : SimError(kExitBadInput, what) {}
};

// Folded replicas or identical ranks (system/groups/replica_folding.h) turn
// out not to mirror each other, so one cannot stand for the others: the
// caller runs every rank instead (the same results, slower).
class FoldingRefused : public InputError {
 public:
  // kRoutes: a copy's route is not priced as the original's; folding more
  // replicas at a time (a longer period, system/groups/replica_folding.h) may
  // still be exact. kNoPeriod: a collective over the copies is not the same
  // member after member at any period short of its whole group (NCCL's tree),
  // so no period of replicas folds it exactly, though stand-ins may time it.
  // kPointToPoint: a rank's messages to its own copies (context-parallel
  // ranks folded as copies) do not mirror; simulating them fold otherwise.
  enum Reason { kOther, kRoutes, kNoPeriod, kPointToPoint };
  explicit FoldingRefused(const std::string& what) : InputError(what) {}
  FoldingRefused(Reason reason, const std::string& what) : InputError(what), reason_(reason) {}
  Reason reason() const { return reason_; }

 private:
  Reason reason_ = kOther;
};

// The simulation cannot complete: deadlock, unmatched message, cycle (exit 3).
class IncompleteError : public SimError {
 public:
  explicit IncompleteError(const std::string& what) : SimError(kExitIncomplete, what) {}
};

// Memory ran out while reading an input (exit 2): the message names the file.
// Not an InputError: a reader that tries another format on an InputError
// must not retry this one.
class OutOfMemoryError : public SimError {
 public:
  explicit OutOfMemoryError(const std::string& what) : SimError(kExitBadInput, what) {}
};

}  // namespace sim
