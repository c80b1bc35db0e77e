// Loading an injected algorithm from wherever it is written: per-rank Chakra
// ETs (system/program/et_algorithm.h) or MSCCL-IR XML, imported on the fly
// (system/producers/msccl_import.h). The registry is the lowest layer that
// knows both.
#pragma once

#include <optional>
#include <string>

#include "system/program/et_algorithm.h"

namespace sim {

// A source ending in .xml is MSCCL-IR; anything else a folder or prefix of
// rank ETs. Throws InputError (IncompleteError for a cycle) naming file and
// node id.
EtAlgorithm load_et_algorithm(const std::string& source, std::optional<CollectiveType> expected);

}  // namespace sim
