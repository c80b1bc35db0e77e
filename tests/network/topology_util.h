// Test helpers on a Topology: a route's links, the link between two nodes, and
// the check that bad topology YAML is an InputError naming the file and key.
#pragma once

#include <gtest/gtest.h>

#include <initializer_list>
#include <string>
#include <vector>

#include "core/error.h"
#include "network/topology.h"

namespace sim::testing_support {

inline std::vector<LinkId> route(const Topology& t, NodeId src, NodeId dst) {
  std::vector<LinkId> r;
  t.route(src, dst, r);
  return r;
}

inline LinkId link_between(const Topology& t, NodeId from, NodeId to) {
  for (LinkId l = 0; l < t.links().size(); ++l) {
    if (t.links()[l].from == from && t.links()[l].to == to) return l;
  }
  ADD_FAILURE() << "no link " << from << " -> " << to;
  return 0;
}

// Expects parse_topology(yaml) to throw an InputError containing every piece.
inline void expect_error(const std::string& yaml, std::initializer_list<std::string> pieces) {
  try {
    parse_topology(yaml, "configs/x.yml");
    ADD_FAILURE() << "accepted:\n" << yaml;
  } catch (const InputError& e) {
    const std::string what = e.what();
    EXPECT_EQ(e.exit_code(), kExitBadInput);
    EXPECT_NE(what.find("configs/x.yml"), std::string::npos) << what;
    for (const std::string& p : pieces) EXPECT_NE(what.find(p), std::string::npos) << "'" << p << "' not in: " << what;
  }
}

}  // namespace sim::testing_support
