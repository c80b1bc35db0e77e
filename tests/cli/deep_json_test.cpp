// JSON nested deeper than the strict reader's limit (512 levels) inside a
// trace's process-group METADATA and in a sweep's system JSON is exit 2
// naming the file (for a sweep: each point's), never a stack overflow
// (nlohmann's dump and copy recurse).
#include <gtest/gtest.h>

#include "../common/run_sim.h"
#include "../common/temp_workload.h"

namespace sim {
namespace {

using testing::run_sim;
using testing::SimRun;

class DeepJson : public testing::TempWorkload {};

std::string nested(std::size_t depth) { return std::string(depth, '[') + std::string(depth, ']'); }

TEST_F(DeepJson, ProcessGroupMetadataNestedTooDeepIsAnInputError) {
  et::Node pg;
  pg.set_id(1);
  pg.set_name("[pytorch|profiler|execution_trace|process_group:init]");
  pg.set_type(et::METADATA_NODE);
  pg.mutable_inputs()->set_values("['[{\"pg_name\": " + nested(100000) + ", \"ranks\": []}]']");
  et::Node comp;
  comp.set_id(2);
  comp.set_name("c");
  comp.set_type(et::COMP_NODE);
  comp.set_duration_micros(1);
  const std::string w = workload("w", {{pg, comp}});
  const SimRun r = run_sim("--workload " + w + " --network " + testing::shipped_config("ring8.yml"));
  EXPECT_EQ(r.code, 2) << r.output.substr(0, 2000);
  EXPECT_NE(r.output.find("sim: error: " + w + ".0.et: rank 0, node 1 "), std::string::npos) << r.output.substr(0, 2000);
  EXPECT_NE(r.output.find("process-group metadata (inputs.values) is not a JSON list: inputs.values: JSON nested "
                          "deeper than 512 levels"),
            std::string::npos)
      << r.output.substr(0, 2000);
}

TEST_F(DeepJson, SweepSystemJsonNestedTooDeepIsAnInputError) {
  // A key-path override makes the sweep re-serialize the system JSON.
  const std::string system = text_file("sys.json", "{\"deep\": " + nested(100000) + ", \"active-chunks-per-dimension\": 1}");
  const std::string spec = text_file("sweep.yml", "base:\n  microbenchmark: {npus: 8, collectives: [allreduce], size: 1MiB}\n"
                                                  "  network: " + testing::shipped_config("ring8.yml") +
                                                      "\n  system: " + system +
                                                      "\naxes:\n  system.active-chunks-per-dimension: [1, 2]\n");
  const SimRun r = run_sim("sweep " + spec + " -o " + path("out"));
  // The sweep finishes (exit 4: some points failed); each point is exit 2 naming the file.
  EXPECT_EQ(r.code, 4) << r.output.substr(0, 2000);
  for (const char* point : {"point 0", "point 1"}) {
    EXPECT_NE(r.output.find(std::string(point) + " failed (exit 2): " + system + ": JSON nested deeper than 512 levels"),
              std::string::npos)
        << r.output.substr(0, 2000);
  }
}

}  // namespace
}  // namespace sim
