// The PyTorch readers stream from a file (gzip or plain, told by its bytes):
// the PyTorch harnesses hand each input over as a temporary file in $TMPDIR,
// removed when the input is done.
#pragma once

#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

namespace sim::fuzz {

class InputFile {
 public:
  InputFile(const std::uint8_t* data, std::size_t size, const char* name) {
    const char* tmp = std::getenv("TMPDIR");
    path_ = std::string(tmp && tmp[0] ? tmp : "/tmp") + "/sim_fuzz_" + std::to_string(::getpid()) + "_" + name;
    std::ofstream(path_, std::ios::binary).write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  }
  ~InputFile() { std::remove(path_.c_str()); }
  InputFile(const InputFile&) = delete;
  InputFile& operator=(const InputFile&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// Inputs above these sizes are skipped so that each ends well within the
// fuzzer's per-input time bound under the sanitizers: every stage is linear,
// but the sanitized build reads JSON at roughly 0.1 MB/s, and a gzip input
// expands (a 64 KiB slice of a real trace to 1.6 MB, which took over 10 s).
inline bool too_large_to_fuzz(const std::uint8_t* data, std::size_t size) {
  const bool gzip = size >= 2 && data[0] == 0x1f && data[1] == 0x8b;
  return size > (gzip ? std::size_t{4} << 10 : std::size_t{128} << 10);
}

}  // namespace sim::fuzz
