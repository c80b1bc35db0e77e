// Which collective program runs a COMM_COLL node: the native ring, or an
// algorithm injected as Chakra ETs (--collective / system config), cached per
// (type, group size, bytes) so all instances of one shape share one program.
#pragma once

#include <map>
#include <memory>
#include <tuple>

#include "system/collective_program.h"
#include "system/et_algorithm.h"
#include "system/system_config.h"

namespace sim {

class AlgorithmRegistry {
 public:
  // Loads every injected algorithm named in the config (throws InputError).
  explicit AlgorithmRegistry(const SystemConfig& config);

  // The program for a collective, or nullptr when no algorithm covers the type
  // (the caller then replays the node's duration). Throws InputError when an
  // injected algorithm's rank count differs from the group size.
  std::shared_ptr<const CollectiveProgram> program_for(CollectiveType type, std::uint32_t group_size,
                                                       std::uint64_t bytes);

 private:
  const SystemConfig& config_;
  std::map<CollectiveType, std::shared_ptr<const EtAlgorithm>> injected_;
  std::map<std::tuple<int, std::uint32_t, std::uint64_t>, std::shared_ptr<const CollectiveProgram>> cache_;
};

}  // namespace sim
