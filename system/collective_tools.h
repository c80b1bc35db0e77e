// `sim collective gen` and `sim collective check`.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>

namespace sim {

struct GenOptions {
  std::string algorithm = "ring";
  std::string collective;
  std::uint32_t npus = 0;
  std::uint32_t chunks = 1;
  std::string size_text = "1MiB";
  std::string prefix;
};

struct CheckOptions {
  std::string prefix;
  std::string collective;  // empty: from the ET metadata
  std::string size_text = "1MiB";
};

// Each returns the exit code and throws SimError for bad input.
int generate_algorithm(const GenOptions& options, std::ostream& out);
int check_algorithm(const CheckOptions& options, std::ostream& out);

}  // namespace sim
