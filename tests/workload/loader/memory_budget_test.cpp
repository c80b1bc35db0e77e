// The memory check before loading (workload/loader/memory_budget.h): what is
// available, the lower-bound estimate, and the refusal message.
#include "workload/loader/memory_budget.h"

#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "core/error.h"

namespace sim {
namespace {

class MemoryBudget : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::path(::testing::TempDir()) / ("sim_membudget_" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string file(const std::string& name, const std::string& bytes) const {
    const std::string p = (dir_ / name).string();
    std::ofstream(p, std::ios::binary) << bytes;
    return p;
  }
  std::filesystem::path dir_;
};

TEST(MemoryBudgetParse, MemAvailableInBytes) {
  EXPECT_EQ(parse_meminfo_available("MemTotal:       24000000 kB\nMemFree: 1 kB\nMemAvailable:    2048 kB\n"),
            2048u * 1024u);
  EXPECT_EQ(parse_meminfo_available("MemTotal: 1 kB\n"), UINT64_MAX);
}

TEST(MemoryBudgetParse, CgroupLimit) {
  EXPECT_EQ(parse_cgroup_limit("max\n"), UINT64_MAX);
  EXPECT_EQ(parse_cgroup_limit("1073741824\n"), 1073741824u);
  EXPECT_EQ(parse_cgroup_limit(""), UINT64_MAX);
}

TEST_F(MemoryBudget, EstimateIsTheLargestTracePlusTheGraphs) {
  const std::string a = file("w.0.et", std::string(1000, '\x0a'));
  const std::string b = file("w.1.et", std::string(3000, '\x0a'));
  EXPECT_EQ(estimate_load_bytes({a, b}), 3000u + static_cast<std::uint64_t>(4000 * kGraphBytesPerTraceByte));
}

TEST_F(MemoryBudget, GzippedTraceCountsItsInflatedSize) {
  // Only the gzip header and the trailer's ISIZE (RFC 1952) are read: 1,000,000 bytes inflated.
  std::string gz = "\x1f\x8b\x08";
  gz += std::string(40, '\0');
  gz += std::string("\x40\x42\x0f\x00", 4);
  const std::string p = file("w.0.et.gz", gz);
  EXPECT_EQ(estimate_load_bytes({p}), 1000000u + static_cast<std::uint64_t>(1000000 * kGraphBytesPerTraceByte));
}

TEST_F(MemoryBudget, AddressSpaceLimitIsSeenAndATooLargeWorkloadRefused) {
  // In a child: RLIMIT_AS only 64 MiB above what is mapped now.
  const std::string big = (dir_ / "w.0.et").string();
  std::filesystem::resize_file(file("w.0.et", ""), std::uint64_t{256} << 20);  // sparse: nothing is read
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    std::ifstream status("/proc/self/status");
    std::uint64_t vm = 0;
    for (std::string line; std::getline(status, line);) {
      if (line.rfind("VmSize:", 0) == 0) vm = std::stoull(line.substr(7)) * 1024;
    }
    const rlimit lim{vm + (std::uint64_t{64} << 20), vm + (std::uint64_t{64} << 20)};
    if (setrlimit(RLIMIT_AS, &lim) != 0) _exit(10);
    const MemoryAvailable avail = available_memory();
    if (avail.bytes > (std::uint64_t{64} << 20)) _exit(11);
    if (avail.source.find("RLIMIT_AS") == std::string::npos) _exit(12);
    try {
      check_memory_for_load({big}, "traces/w");
      _exit(13);
    } catch (const InputError& e) {
      const std::string m = e.what();
      if (m.find("traces/w: the workload is too large for the memory available") != 0) _exit(14);
      if (m.find("RLIMIT_AS") == std::string::npos || m.find("294 MiB") == std::string::npos) _exit(15);
      _exit(0);
    }
  }
  int status = 0;
  waitpid(pid, &status, 0);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "10 setrlimit, 11 limit not seen, 12 source, 13 not refused, 14/15 message";
}

TEST_F(MemoryBudget, AWorkloadThatFitsIsAccepted) {
  const std::string p = file("w.0.et", std::string(4096, '\x0a'));
  EXPECT_NO_THROW(check_memory_for_load({p}, "w"));
}

}  // namespace
}  // namespace sim
