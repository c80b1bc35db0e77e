// `sim collective gen` and `sim collective check`.
#pragma once

#include <cstdint>
#include <ostream>
#include <memory>
#include <string>
#include <vector>

#include "system/program/collective_program.h"
#include "workload/et/et_io.h"
#include "workload/rank_graph.h"

namespace sim {

struct GenOptions {
  std::string algorithm = "ring";
  std::string collective;
  std::uint32_t npus = 0;
  std::uint32_t chunks = 1;
  std::string size_text = "1MiB";
  std::string prefix;
  // A topology YAML: a hierarchical algorithm runs on its dimensions (--npus
  // must equal its NPU count). Empty: one dimension of --npus ranks.
  std::string network;
};

struct CheckOptions {
  std::string prefix;
  std::string collective;  // empty: from the ET metadata
  std::string size_text = "1MiB";
};

// `algorithm` (a native name, optionally with parameters: "direct:window=2")
// as per-rank ETs, written for `bytes` (throws InputError for an unknown
// algorithm or a type it does not implement).
// The program itself (`chunks` becomes the algorithm's chunks= parameter when given).
// A hierarchical choice runs on NPUs 0..npus-1 of a topology with dimension
// sizes `dims` (empty: one dimension), localBWAware, no chunk limit unless
// its parameters say otherwise.
std::shared_ptr<const CollectiveProgram> native_program(const std::string& algorithm, CollectiveType type,
                                                        std::uint32_t npus, std::uint32_t& chunks, std::uint64_t bytes,
                                                        const std::vector<std::uint32_t>& dims = {});
std::vector<EtTrace> native_algorithm_ets(const std::string& algorithm, CollectiveType type, std::uint32_t npus,
                                          std::uint32_t chunks, std::uint64_t bytes,
                                          const std::vector<std::uint32_t>& dims = {});

// Each returns the exit code and throws SimError for bad input.
int generate_algorithm(const GenOptions& options, std::ostream& out);
int check_algorithm(const CheckOptions& options, std::ostream& out);

}  // namespace sim
