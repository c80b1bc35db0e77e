// ASTRA-sim's remote-memory JSON (--remote-memory-configuration), checked on
// the input's text (the path form only reads the file first, through the
// strict reader the other harnesses cover).
#include "fuzz/harness.h"
#include "system/astrasim/astrasim_system.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace sim;
  fuzz::expect_clean("remote_memory_json",
                     [&] { check_astrasim_remote_memory_text(fuzz::text_of(data, size), "fuzz/remote_memory.json"); });
  return 0;
}
