// Bad topology input is an InputError naming the file, the line and the key.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <string>

#include "core/error.h"
#include "network/topology.h"
#include "tests/network/topology_util.h"

namespace sim {
namespace {

using testing_support::expect_error;

const std::string kAstra = "topology: [Ring]\nnpus_count: [8]\nbandwidth: [50]\nlatency: [500]\n";
const std::string kShape = "shape: Ring\nnpus: 8\nbandwidth: 50GB/s\nlatency: 500ns\n";
const std::string kGraph = "npus: 2\nlinks:\n  - {src: 0, dst: 1, bandwidth: 50, latency: 500}\n";

TEST(TopologyErrors, UnknownKeyNamesFileLineAndKey) {
  expect_error(kShape + "bandwdith: 50\n", {"configs/x.yml:5:", "unknown key 'bandwdith'"});
  expect_error(kAstra + "npu_count: [8]\n", {"configs/x.yml:5:", "unknown key 'npu_count'"});
  expect_error(kGraph + "switch: 1\n", {"unknown key 'switch'"});
  expect_error("npus: 2\nlinks:\n  - {src: 0, dst: 1, bandwith: 50, latency: 500}\n",
               {"configs/x.yml:3:", "unknown key 'links[0].bandwith'"});
  // Keys of another form are unknown too.
  expect_error(kShape + "npus_count: [8]\n", {"unknown key 'npus_count'"});
}

TEST(TopologyErrors, DuplicateKey) { expect_error(kShape + "latency: 600ns\n", {"duplicate key 'latency'"}); }

TEST(TopologyErrors, NonPositiveBandwidth) {
  expect_error("shape: Ring\nnpus: 8\nbandwidth: 0\nlatency: 500\n",
               {"configs/x.yml:3:", "'bandwidth'", "bandwidth must be > 0"});
  expect_error("topology: [Ring]\nnpus_count: [8]\nbandwidth: [0GB/s]\nlatency: [500]\n",
               {"'bandwidth[0]'", "bandwidth must be > 0"});
  expect_error("shape: Ring\nnpus: 8\nbandwidth: -5\nlatency: 500\n", {"'bandwidth'", "negative"});
  expect_error("npus: 2\nlinks:\n  - {src: 0, dst: 1, bandwidth: 0, latency: 500}\n",
               {"'links[0].bandwidth'", "bandwidth must be > 0"});
}

TEST(TopologyErrors, NegativeLatency) {
  expect_error("shape: Ring\nnpus: 8\nbandwidth: 50\nlatency: -500\n", {"configs/x.yml:4:", "'latency'", "negative"});
  expect_error("topology: [Ring, Ring]\nnpus_count: [4, 2]\nbandwidth: [50, 50]\nlatency: [500, -1]\n",
               {"'latency[1]'", "negative"});
}

TEST(TopologyErrors, BadUnits) {
  expect_error("shape: Ring\nnpus: 8\nbandwidth: 50GBs\nlatency: 500\n", {"'bandwidth'", "unknown unit 'GBs'"});
  expect_error("shape: Ring\nnpus: 8\nbandwidth: 50\nlatency: 0.5ps\n", {"'latency'", "'0.5ps'"});
  expect_error("bandwidth_unit: Gbps\n" + kAstra, {"'bandwidth_unit' must be GB/s or GiB/s"});
}

TEST(TopologyErrors, MismatchedListLengths) {
  expect_error("topology: [Ring, Switch]\nnpus_count: [8]\nbandwidth: [50, 50]\nlatency: [500, 500]\n",
               {"configs/x.yml:2:", "'npus_count' has 1 entries but 'topology' has 2"});
  expect_error("topology: [Ring]\nnpus_count: [8]\nbandwidth: [50]\nlatency: [500, 500]\n",
               {"'latency' has 2 entries"});
}

TEST(TopologyErrors, UnknownShapeOrBuildingBlock) {
  expect_error("shape: Donut\nnpus: 8\nbandwidth: 50\nlatency: 500\n", {"configs/x.yml:1:", "unknown shape 'Donut'"});
  expect_error("topology: [Rnig]\nnpus_count: [8]\nbandwidth: [50]\nlatency: [500]\n",
               {"'topology[0]'", "unknown topology 'Rnig'"});
}

TEST(TopologyErrors, SizesAndDimensions) {
  expect_error("topology: [Ring]\nnpus_count: [1]\nbandwidth: [50]\nlatency: [500]\n", {"'npus_count[0]' must be >= 2"});
  expect_error("shape: Torus\ndims: [8, 1]\nbandwidth: 50\nlatency: 500\n", {"'dims[1]' must be >= 2"});
  expect_error("shape: Ring\nnpus: 8.5\nbandwidth: 50\nlatency: 500\n", {"'npus' must be a whole number"});
  expect_error("shape: Ring\ndims: [4, 4]\nbandwidth: 50\nlatency: 500\n", {"Ring takes one dimension"});
  expect_error("shape: Mesh\ndims: [64]\nbandwidth: 50\nlatency: 500\n", {"Mesh takes 2 or 3 dimensions"});
  expect_error("shape: Torus\nnpus: 64\nbandwidth: 50\nlatency: 500\n", {"'npus'", "Torus takes 'dims'"});
  expect_error("shape: Hypercube\nnpus: 48\nbandwidth: 50\nlatency: 500\n", {"'npus' must be a power of two"});
  expect_error("shape: Hypercube\ndims: [2, 2]\nbandwidth: 50\nlatency: 500\n", {"'dims'", "Hypercube takes 'npus'"});
  // Neither: was yaml-cpp's "invalid node" escaping as an internal error (fuzz finding).
  expect_error("shape: Hypercube\nbandwidth: 50\nlatency: 500\n", {"configs/x.yml:1:", "missing key 'npus'"});
  expect_error("shape: Ring\nnpus: 8\ndims: [8]\nbandwidth: 50\nlatency: 500\n", {"either 'dims' or 'npus'"});
  expect_error("shape: Torus\ndims: 8\nbandwidth: 50\nlatency: 500\n", {"'dims' must be a list"});
}

// Link counts are summed in 64 bits and capped at 2^24 before anything is
// allocated: a fully connected block of 355,684,854 NPUs has 1.27e17 links,
// which 32-bit arithmetic wrapped to a count that passed (the fuzzer's find,
// fuzz/regressions/topology_yaml/fully_connected_links_wrap_32_bits.yml).
TEST(TopologyErrors, LinkCountsDoNotWrap) {
  expect_error("topology: [FullyConnected]\nnpus_count: [355684854]\nbandwidth: [50]\nlatency: [500]\n",
               {"configs/x.yml: topology too large (126511715009316462 links, limit 2^24)"});
  expect_error("shape: FullyConnected\nnpus: 65536\nbandwidth: 50\nlatency: 500\n",
               {"topology too large (4294901760 links, limit 2^24)"});
  expect_error("shape: Ring\nnpus: 8388609\nbandwidth: 50\nlatency: 500\n", {"(16777218 links, limit 2^24)"});
  // The largest still allowed: 2^24 links exactly.
  EXPECT_EQ(parse_topology("shape: Ring\nnpus: 8388608\nbandwidth: 50\nlatency: 500\n", "configs/x.yml").links().size(),
            std::size_t{1} << 24);
}

TEST(TopologyErrors, WrongTypes) {
  expect_error("topology: Ring\nnpus_count: [8]\nbandwidth: [50]\nlatency: [500]\n", {"'topology' must be a list"});
  expect_error("shape: Ring\nnpus: 8\nbandwidth: [50]\nlatency: 500\n", {"'bandwidth' must be a single value"});
  expect_error("npus: 2\nlinks:\n  - [0, 1]\n", {"'links[0]' must be a map"});
  expect_error(kGraph.substr(0, kGraph.size() - 2) + ", bidirectional: maybe}\n",
               {"'links[0].bidirectional' must be true or false"});
}

TEST(TopologyErrors, MissingKeys) {
  expect_error("shape: Ring\nnpus: 8\nlatency: 500\n", {"missing key 'bandwidth'"});
  expect_error("topology: [Ring]\nnpus_count: [8]\nbandwidth: [50]\n", {"missing key 'latency'"});
  expect_error("npus: 2\nlinks:\n  - {src: 0, dst: 1, latency: 500}\n",
               {"'links[0]' has no 'bandwidth' and there is no top-level default"});
  expect_error("name: x\n", {"cannot tell the topology form"});
  expect_error("", {"a topology must be a map"});
}

TEST(TopologyErrors, GraphNodes) {
  expect_error("npus: 2\nlinks:\n  - {src: 0, dst: 2, bandwidth: 50, latency: 500}\n",
               {"configs/x.yml:3:", "'links[0].dst': node 2 out of range"});
  expect_error("npus: 2\nlinks:\n  - {src: npu0, dst: sw0, bandwidth: 50, latency: 500}\n",
               {"'links[0].dst': no switch sw0"});
  expect_error("npus: 2\nlinks:\n  - {src: 1, dst: 1, bandwidth: 50, latency: 500}\n", {"links node 1 to itself"});
}

// A second link in one direction of a pair would never carry traffic (routes
// take the first), its bandwidth lost without a word: refused, naming both.
TEST(TopologyErrors, ALinkGivenTwice) {
  const std::string head =
      "npus: 2\nswitches: 1\nbandwidth: 50\nlatency: 500\nlinks:\n  - {src: npu0, dst: sw0}\n"
      "  - {src: npu1, dst: sw0}\n";
  expect_error(head + "  - {src: npu0, dst: sw0, bandwidth: 1GB/s}\n",
               {"configs/x.yml:8:",
                "'links[2]' repeats the link npu0 -> sw0 of 'links[0]' (one link per direction of a "
                "pair: give its whole bandwidth once)"});
  // Written the other way round, as node ids, or one way only: the same link.
  expect_error(head + "  - {src: 2, dst: 1}\n", {"'links[2]' repeats the link sw0 -> npu1 of 'links[1]'"});
  expect_error(head + "  - {src: sw0, dst: npu0, bidirectional: false}\n",
               {"'links[2]' repeats the link sw0 -> npu0 of 'links[0]'"});
  // The reverse of a one-way link is a link of its own.
  EXPECT_EQ(parse_topology("npus: 2\nbandwidth: 50\nlatency: 500\nlinks:\n  - {src: 0, dst: 1, bidirectional: false}\n"
                           "  - {src: 1, dst: 0, bidirectional: false, bandwidth: 25}\n",
                           "configs/x.yml")
                .links()
                .size(),
            2u);
}

TEST(TopologyErrors, UnreachableNode) {
  expect_error("npus: 4\nbandwidth: 50\nlatency: 500\nlinks:\n  - {src: 0, dst: 1}\n  - {src: 1, dst: 2}\n",
               {"configs/x.yml:5:", "npu 3 cannot reach npu 0"});
  expect_error("npus: 3\nbandwidth: 50\nlatency: 500\nlinks:\n"
               "  - {src: 0, dst: 1}\n  - {src: 1, dst: 2, bidirectional: false}\n",
               {"npu 2 cannot reach npu 0"});
  expect_error("npus: 3\nbandwidth: 50\nlatency: 500\nlinks:\n"
               "  - {src: 0, dst: 1}\n  - {src: 2, dst: 1, bidirectional: false}\n",
               {"npu 0 cannot reach npu 2"});
}

TEST(TopologyErrors, InvalidYamlSyntax) { expect_error("shape: [Ring\n", {"invalid YAML"}); }

TEST(TopologyErrors, LoadNamesThePath) {
  const std::string path = ::testing::TempDir() + "bad_topology_" + std::to_string(::getpid()) + ".yml";
  std::ofstream(path) << kShape << "colour: blue\n";
  try {
    load_topology(path);
    ADD_FAILURE() << "accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find(path + ":5: unknown key 'colour'"), std::string::npos) << e.what();
  }
  std::remove(path.c_str());
  EXPECT_THROW(load_topology(::testing::TempDir() + "no_such_file.yml"), InputError);
}

}  // namespace
}  // namespace sim
