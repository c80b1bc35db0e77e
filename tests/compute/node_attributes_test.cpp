// Kernel attributes of COMP nodes (workload/kernel_shape.h), as the rank
// graph reads them from a Chakra ET, and their errors.
#include <gtest/gtest.h>

#include "compute_test_util.h"
#include "core/error.h"
#include "workload/et/et_io.h"
#include "workload/rank_graph.h"

namespace sim {
namespace {

using namespace sim::testing;

et::Node comp(std::uint64_t id, const std::string& kernel) {
  et::Node n;
  n.set_id(id);
  std::string name = "k";  // appended, not "k" + ...: GCC 12's -Wrestrict misfires on that
  name.append(std::to_string(id));
  n.set_name(name);
  n.set_type(et::COMP_NODE);
  n.set_duration_micros(5);
  if (!kernel.empty()) set_attr_string(n, "kernel", kernel);
  return n;
}

et::Node gemm_node(std::uint64_t id, std::int64_t m, std::int64_t n, std::int64_t k) {
  et::Node node = comp(id, "gemm");
  set_attr_int(node, "gemm_m", m);
  set_attr_int(node, "gemm_n", n);
  set_attr_int(node, "gemm_k", k);
  return node;
}

RankGraph graph(std::vector<et::Node> nodes) {
  EtTrace t;
  t.path = "mem.0.et";
  t.metadata.set_version("0.0.4");
  t.nodes = std::move(nodes);
  return RankGraph(t, 0, GraphOptions{});
}

TEST(NodeAttributes, EachKindReadsItsShape) {
  et::Node g = gemm_node(1, 4096, 1024, 512);
  set_attr_int(g, "gemm_batch", 8);
  set_attr_string(g, "dtype", "fp8");
  et::Node a = comp(2, "attention");
  set_attr_int(a, "attn_batch", 2);
  set_attr_int(a, "attn_heads", 16);
  set_attr_int(a, "attn_seq", 4096);
  set_attr_int(a, "attn_head_dim", 128);
  set_attr_bool(a, "attn_causal", true);
  set_attr_string(a, "attn_pass", "bwd");
  et::Node m = comp(3, "membound");
  set_attr_string(m, "membound_op", "layernorm");
  set_attr_int(m, "elements", 1 << 24);
  const RankGraph rg = graph({g, a, m, comp(4, ""), gemm_node(5, 4096, 1024, 512)});
  KernelShape eg = gemm(4096, 1024, 512, "fp8");
  eg.batch = 8;
  ASSERT_NE(rg.kernel_shape(rg.node(0).kernel), nullptr);
  EXPECT_EQ(*rg.kernel_shape(rg.node(0).kernel), eg);
  KernelShape ea = attention(2, 16, 4096, 128, true, true);
  EXPECT_EQ(*rg.kernel_shape(rg.node(1).kernel), ea);
  EXPECT_EQ(*rg.kernel_shape(rg.node(2).kernel), membound("layernorm", 1 << 24));
  EXPECT_EQ(rg.node(3).kernel, 0u);  // no kernel attributes
  EXPECT_EQ(rg.kernel_shape(0), nullptr);
  EXPECT_EQ(*rg.kernel_shape(rg.node(4).kernel), gemm(4096, 1024, 512));  // defaults: bf16, batch 1
  EXPECT_EQ(rg.kernel_shape_count(), 4u);
}

TEST(NodeAttributes, EqualShapesAreKeptOnce) {
  const RankGraph rg = graph({gemm_node(1, 64, 64, 64), gemm_node(2, 64, 64, 64), gemm_node(3, 64, 64, 128)});
  EXPECT_EQ(rg.node(0).kernel, rg.node(1).kernel);
  EXPECT_NE(rg.node(0).kernel, rg.node(2).kernel);
  EXPECT_EQ(rg.kernel_shape_count(), 2u);
}

std::string attribute_error(et::Node n) {
  try {
    graph({std::move(n)});
  } catch (const InputError& e) {
    return e.what();
  }
  return "no error";
}

TEST(NodeAttributes, ErrorsNameTheNodeAndTheAttribute) {
  et::Node g = gemm_node(7, 64, 64, 64);
  g.mutable_attr()->RemoveLast();  // no gemm_k
  EXPECT_EQ(attribute_error(g), "mem.0.et: rank 0, node 7 'k7': a 'gemm' kernel needs attribute 'gemm_k'");
  EXPECT_EQ(attribute_error(comp(3, "conv")),
            "mem.0.et: rank 0, node 3 'k3': attribute 'kernel' is 'conv'; expected gemm, attention or membound");
  EXPECT_EQ(attribute_error(gemm_node(4, 64, -1, 64)),
            "mem.0.et: rank 0, node 4 'k4': attribute 'gemm_n' is -1; expected a positive integer");
  et::Node d = gemm_node(5, 64, 64, 64);
  set_attr_string(d, "dtype", "int4");
  EXPECT_NE(attribute_error(d).find("node 5 'k5': attribute 'dtype' is 'int4'"), std::string::npos);
  et::Node a = comp(6, "attention");
  for (const char* k : {"attn_batch", "attn_heads", "attn_seq", "attn_head_dim"}) set_attr_int(a, k, 4);
  set_attr_string(a, "attn_pass", "both");
  EXPECT_NE(attribute_error(a).find("attribute 'attn_pass' is 'both'; expected fwd or bwd"), std::string::npos);
  et::Node s = gemm_node(8, 64, 64, 64);
  set_attr_string(s, "gemm_m", "64");  // a string where an integer belongs
  EXPECT_NE(attribute_error(s).find("node 8 'k8': "), std::string::npos);
  EXPECT_NE(attribute_error(s).find("gemm_m"), std::string::npos);
}

TEST(NodeAttributes, OnlyCompNodesCarryShapes) {
  et::Node n = gemm_node(1, 64, 64, 64);
  n.set_type(et::MEM_LOAD_NODE);
  const RankGraph rg = graph({n});
  EXPECT_EQ(rg.node(0).kernel, 0u);
}

}  // namespace
}  // namespace sim
