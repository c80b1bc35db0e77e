// Our system config YAML.
#include "fuzz/harness.h"
#include "system/config/system_config.h"
#include "system/registry/algorithm_choices.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace sim;
  fuzz::expect_clean("system_yaml", [&] { check_algorithm_choices(parse_system_config(fuzz::text_of(data, size), "fuzz.yml")); });
  return 0;
}
