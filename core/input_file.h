// Reading a whole input file (configs, topologies, communicator files, ETs).
//
// Only regular files are read: a directory would read as empty, /dev/zero
// or a FIFO would be read until memory runs out. A size limit turns a file
// larger than memory into a clear error instead of the OOM killer.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

namespace sim {

inline constexpr std::uint64_t kMaxConfigBytes = std::uint64_t{64} << 20;  // 64 MiB: no config is near it

// The file's bytes. InputError naming `what` and the path when it does not
// exist, is not a regular file (saying what it is), is larger than
// `max_bytes`, or cannot be read.
std::string read_input_file(const std::string& path, const std::string& what,
                            std::uint64_t max_bytes = kMaxConfigBytes);

// Whole files read one after another into one buffer: it is kept between
// files and grown only when a file is larger, and never zero-filled first, so
// a loading thread reading 1,024 traces allocates a few times, not 1,024 times,
// and leaves no freed file-sized holes between the graphs it builds.
class FileBuffer {
 public:
  // Same checks and messages as read_input_file; the view lives until the next read or release.
  std::string_view read(const std::string& path, const std::string& what, std::uint64_t max_bytes);
  // The same for a regular file of `size` bytes by a stat just made (the
  // memory budget's, workload/loader/memory_budget.h): no fstat of its own, so a
  // small file costs open, read, close. A file that changed size since reads
  // as read() would.
  std::string_view read_sized(const std::string& path, const std::string& what, std::uint64_t max_bytes,
                              std::uint64_t size);
  void release() {
    bytes_.reset();
    capacity_ = 0;
  }
  std::size_t capacity() const { return capacity_; }

 private:
  std::unique_ptr<char[]> bytes_;
  std::size_t capacity_ = 0;
};

}  // namespace sim
