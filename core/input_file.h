// Reading a whole input file (configs, topologies, communicator files, ETs).
//
// Only regular files are read: a directory would read as empty, /dev/zero
// or a FIFO would be read until memory runs out. A size limit turns a file
// larger than memory into a clear error instead of the OOM killer.
#pragma once

#include <cstdint>
#include <string>

namespace sim {

inline constexpr std::uint64_t kMaxConfigBytes = std::uint64_t{64} << 20;  // 64 MiB: no config is near it

// The file's bytes. InputError naming `what` and the path when it does not
// exist, is not a regular file (saying what it is), is larger than
// `max_bytes`, or cannot be read.
std::string read_input_file(const std::string& path, const std::string& what,
                            std::uint64_t max_bytes = kMaxConfigBytes);

}  // namespace sim
