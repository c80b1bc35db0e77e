// The optional modules seen from the command line: a run that does not use
// ns-3 or MPI does not map their libraries; one that does loads the module;
// a missing or broken module is a clear error (exit 2), not a crash.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "../common/run_sim.h"
#include "../common/temp_workload.h"

namespace sim {
namespace {

using testing::run_shell;
using testing::run_sim;
using testing::SimRun;

using testing::shipped_config;

class Modules : public testing::TempWorkload {
 protected:
  // A folder holding `file` that is not a shared object: stands for a module
  // whose libraries are missing (dlopen fails either way).
  std::string broken_module_dir(const std::string& file) {
    std::filesystem::create_directories(path("modules"));
    std::ofstream(path("modules/" + file)) << "not a shared object\n";
    return path("modules");
  }
  std::string two_rank_p2p() { return workload("p2p", {{testing::p2p(1, true, 1, 64 << 10)}, {testing::p2p(1, false, 0, 64 << 10)}}); }
};

// LD_DEBUG=libs makes the loader name every library it maps.
TEST_F(Modules, VersionMapsNoNs3OrMpiLibrary) {
  const SimRun v = run_shell("LD_DEBUG=libs " + std::string(SIM_BINARY) + " --version 2>&1");
  ASSERT_EQ(v.code, 0) << v.output;
  EXPECT_NE(v.output.find("calling init"), std::string::npos) << "LD_DEBUG gave no trace: " << v.output;
  EXPECT_EQ(v.output.find("libns3"), std::string::npos) << v.output;
  EXPECT_EQ(v.output.find("libmpi"), std::string::npos) << v.output;
  const SimRun ldd = run_shell("ldd " + std::string(SIM_BINARY) + " 2>&1");
  ASSERT_EQ(ldd.code, 0) << ldd.output;
  EXPECT_EQ(ldd.output.find("libns3"), std::string::npos) << ldd.output;
  EXPECT_EQ(ldd.output.find("libmpi"), std::string::npos) << ldd.output;
}

TEST_F(Modules, Ns3BackendLoadsItsModuleAndRuns) {
#ifndef SIM_HAVE_NS3
  GTEST_SKIP() << "ns-3 not found at configure time: libsim_ns3.so is not built";
#endif
  const SimRun r = run_shell("LD_DEBUG=libs " + std::string(SIM_BINARY) + " --workload " + two_rank_p2p() +
                             " --network " + shipped_config("ring8.yml") + " --backend ns3 2>&1");
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("libsim_ns3.so"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("libns3"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("backend ns3"), std::string::npos) << r.output;
  EXPECT_EQ(run_sim("--help").output.find("module not found"), std::string::npos);
}

TEST_F(Modules, BrokenNs3ModuleIsAnInputError) {
  const std::string dir = broken_module_dir("libsim_ns3.so");
  const SimRun r = run_shell("SIM_MODULE_DIR=" + dir + " " + SIM_BINARY + " --workload " + two_rank_p2p() +
                             " --network " + shipped_config("ring8.yml") + " --backend ns3 2>&1");
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find("network backend 'ns3': cannot load module " + dir + "/libsim_ns3.so: "), std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("install libns3-dev"), std::string::npos) << r.output;
}

// Under mpirun (its environment faked) with a broken libsim_mpi.so: exit 2 naming it, before any point runs.
TEST_F(Modules, BrokenMpiModuleUnderMpirunIsAnInputError) {
  const std::string dir = broken_module_dir("libsim_mpi.so");
  const std::string spec = shipped_config("sweeps/bandwidth_size.yml");
  const SimRun r = run_shell("OMPI_COMM_WORLD_SIZE=1 SIM_MODULE_DIR=" + dir + " " + SIM_BINARY + " sweep " + spec +
                             " -q -o " + path("out") + " 2>&1");
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find("sim sweep under mpirun (OMPI_COMM_WORLD_SIZE is set): cannot load module " + dir +
                          "/libsim_mpi.so: "),
            std::string::npos)
      << r.output;
}

// `sim sweep --help` names the MPI module and says when it is not found.
TEST_F(Modules, SweepHelpSaysWhetherTheMpiModuleIsFound) {
  const SimRun h = run_sim("sweep --help");
  ASSERT_EQ(h.code, 0) << h.output;
  EXPECT_NE(h.output.find("MPI is the module libsim_mpi.so"), std::string::npos) << h.output;
#ifdef SIM_HAVE_MPI
  EXPECT_EQ(h.output.find("module not found"), std::string::npos) << h.output;
#endif
  const SimRun elsewhere = run_shell("SIM_MODULE_DIR=" + path("") + " " + SIM_BINARY + " sweep --help 2>&1");
  EXPECT_EQ(elsewhere.output, h.output);  // an empty $SIM_MODULE_DIR: the later folders are still searched
}

}  // namespace
}  // namespace sim
