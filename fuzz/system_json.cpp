// ASTRA-sim's system JSON.
#include "fuzz/harness.h"
#include "system/astrasim/astrasim_system.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace sim;
  fuzz::expect_clean("system_json", [&] { parse_astrasim_system(fuzz::text_of(data, size), "fuzz.json"); });
  return 0;
}
