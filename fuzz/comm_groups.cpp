// Communicator JSON ({"<pg_name>": [ranks...]}).
#include "system/groups/comm_group_file.h"
#include "fuzz/harness.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace sim;
  fuzz::expect_clean("comm_groups", [&] { parse_comm_groups(fuzz::text_of(data, size), "fuzz.json"); });
  return 0;
}
