// A per-test temporary folder with helpers that write Chakra ETs and text
// files into it, for tests that run the `sim` binary on hostile inputs.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "workload/et/et_io.h"

namespace sim::testing {

class TempWorkload : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::path(::testing::TempDir()) /
           ("sim_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->test_suite_name() + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::string path(const std::string& name) const { return (dir_ / name).string(); }

  // Writes <prefix>.<rank>.et for each rank's nodes; returns the prefix.
  std::string workload(const std::string& prefix, const std::vector<std::vector<et::Node>>& ranks) const {
    for (std::size_t r = 0; r < ranks.size(); ++r) {
      EtTrace t;
      t.metadata.set_version("0.0.4");
      t.nodes = ranks[r];
      write_et(t, path(prefix + "." + std::to_string(r) + ".et"));
    }
    return path(prefix);
  }
  std::string text_file(const std::string& name, const std::string& content) const {
    std::ofstream(path(name)) << content;
    return path(name);
  }

  std::filesystem::path dir_;
};

// A COMM_SEND (to `peer`) or COMM_RECV (from `peer`) of `bytes`, tag 5.
inline et::Node p2p(std::uint64_t id, bool send, int peer, std::int64_t bytes) {
  et::Node n;
  n.set_id(id);
  n.set_name(send ? "send" : "recv");
  n.set_type(send ? et::COMM_SEND_NODE : et::COMM_RECV_NODE);
  set_attr_int(n, send ? "comm_dst" : "comm_src", peer);
  set_attr_int(n, "comm_size", bytes);
  set_attr_int(n, "comm_tag", 5);
  return n;
}

}  // namespace sim::testing
