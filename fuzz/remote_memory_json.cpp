// ASTRA-sim's remote-memory JSON (--remote-memory-configuration). The reader
// takes a path, so each input is written to one file per process first.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>

#include "fuzz/harness.h"
#include "system/astrasim_system.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace sim;
  static const std::string path = "/tmp/sim_fuzz_remote_memory." + std::to_string(getpid()) + ".json";
  static const bool cleanup = std::atexit([] { std::remove(path.c_str()); }) == 0;
  (void)cleanup;
  {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  }
  fuzz::expect_clean("remote_memory_json", [&] { check_astrasim_remote_memory(path); });
  return 0;
}
