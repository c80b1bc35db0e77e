// The fabric of the stand-in tests (stand_in_test.cpp, flow_stand_in_test.cpp):
// 4 GPUs a node, 2 nodes a leaf, 4 leaves. A rail's ring crosses the spine at
// every other hop, and NCCL's tree over the nodes has a root, inner nodes and
// leaves.
#pragma once

namespace sim::testing {

inline constexpr const char* kStandInNetwork =
    "topology: [Switch, Switch, Switch]\nnpus_count: [4, 2, 4]\n"
    "bandwidth: [450GB/s, 50GB/s, 50GB/s]\nlatency: [300ns, 1350ns, 500ns]\n";

}  // namespace sim::testing
