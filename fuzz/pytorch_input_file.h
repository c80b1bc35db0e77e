// The PyTorch readers stream from a file (gzip or plain, told by its bytes):
// the PyTorch harnesses hand each input over as a temporary file in $TMPDIR,
// removed when the input is done.
#pragma once

#include <unistd.h>

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

// Inputs above this are skipped: every stage is linear, but a gzip input
// expands, and each input must end within a bounded time.
inline constexpr std::size_t kMaxPytorchInput = 1 << 20;

}  // namespace sim::fuzz
