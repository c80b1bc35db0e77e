// The sources behind open_workload, one file each: the scheme registry
// (workload_source.cpp) maps a prefix to one of these. Each parses its text
// once and throws InputError naming it when it cannot.
#pragma once

#include <memory>
#include <string>

#include "workload/generators/workload_generator.h"
#include "workload/source/workload_source.h"

namespace sim::source {

// "gen:transformer?..." (generated_source.cpp).
std::shared_ptr<const WorkloadSource> open_generated(const std::string& text);
// "gen:collectives?...", "gen:chain?...", "gen:p2p-ring?..." (microbenchmark_source.cpp).
std::shared_ptr<const WorkloadSource> open_microbenchmark(const std::string& text,
                                                          UnevenSize uneven = UnevenSize::kRefuse);
// "pytorch:DIR" (pytorch_source.cpp).
std::shared_ptr<const WorkloadSource> open_pytorch(const std::string& text);
// A folder or prefix of Chakra ET rank files: anything no scheme claims (file_source.cpp).
std::shared_ptr<const WorkloadSource> open_files(const std::string& text);

}  // namespace sim::source
