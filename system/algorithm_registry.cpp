#include "system/algorithm_registry.h"

#include "core/error.h"
#include "system/ring_program.h"

namespace sim {

AlgorithmRegistry::AlgorithmRegistry(const SystemConfig& config) : config_(config) {
  for (const auto& [type, source] : config.algorithms) {
    if (source == "ring") continue;
    injected_[type] = std::make_shared<const EtAlgorithm>(load_et_algorithm(source, type));
  }
}

std::shared_ptr<const CollectiveProgram> AlgorithmRegistry::program_for(CollectiveType type,
                                                                        std::uint32_t group_size,
                                                                        std::uint64_t bytes) {
  const auto key = std::make_tuple(static_cast<int>(type), group_size, bytes);
  if (auto it = cache_.find(key); it != cache_.end()) return it->second;
  std::shared_ptr<const CollectiveProgram> program;
  if (auto inj = injected_.find(type); inj != injected_.end()) {
    if (inj->second->ranks.size() != group_size) {
      throw InputError("collective algorithm '" + inj->second->source + "' is written for " +
                       std::to_string(inj->second->ranks.size()) + " ranks but a " + collective_name(type) +
                       " runs on a group of " + std::to_string(group_size) + " ranks");
    }
    program = std::make_shared<const EtProgram>(inj->second, bytes);
  } else if (RingProgram::supports(type)) {
    program = std::make_shared<const RingProgram>(type, group_size, bytes, config_.collective_chunks);
  }
  cache_.emplace(key, program);
  return program;
}

}  // namespace sim
