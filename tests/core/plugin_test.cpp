// core/plugin: finding and loading optional modules, and the errors users
// see when a module, a library it needs, or its entry point is missing.
#include "core/plugin.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "../common/temp_folder.h"
#include "core/units.h"

namespace sim {
namespace {

namespace fs = std::filesystem;

const std::string kModules = SIM_TEST_MODULE_DIR;  // tests/modules in the build folder
const std::string kAnswer = "libsim_test_answer.so";

class Plugin : public testing::TempFolderTest {};

std::string load_error(const std::string& file, const std::string& symbol, const std::vector<std::string>& dirs) {
  try {
    module_symbol(file, symbol, dirs);
  } catch (const ModuleError& e) {
    EXPECT_EQ(e.exit_code(), 2);
    return e.what();
  }
  ADD_FAILURE() << "no error loading " << file;
  return "";
}

TEST_F(Plugin, LoadsTheFirstFoundModuleAndItUsesTheExecutablesCode) {
  const std::vector<std::string> dirs = {path("empty"), kModules};
  EXPECT_EQ(find_module(kAnswer, dirs), kModules + "/" + kAnswer);
  auto* answer = module_function<std::uint64_t()>(kAnswer, "sim_test_answer", dirs);
  EXPECT_EQ(answer(), 42u);
  // One copy of the simulator's code: the module binds to the executable's.
  auto* address = module_function<const void*()>(kAnswer, "sim_test_parse_size_address", dirs);
  EXPECT_EQ(address(), reinterpret_cast<const void*>(&parse_size));
  // Loaded once: the same entry point again.
  EXPECT_EQ(module_function<std::uint64_t()>(kAnswer, "sim_test_answer", dirs), answer);
}

TEST_F(Plugin, NotFoundNamesTheFileAndEveryFolderSearched) {
  const std::string e = load_error(kAnswer, "sim_test_answer", {path("a"), path("b")});
  EXPECT_EQ(e, "module " + kAnswer + " not found (looked in " + path("a") + ", " + path("b") +
                   "; set SIM_MODULE_DIR to the folder that holds it)");
  EXPECT_EQ(find_module(kAnswer, {path("a")}), "");
}

TEST_F(Plugin, MissingEntryPointNamesTheModuleAndTheSymbol) {
  const std::string e = load_error(kAnswer, "sim_test_nothing", {kModules});
  EXPECT_EQ(e, "module " + kModules + "/" + kAnswer + " has no entry point 'sim_test_nothing' (built from other sources?)");
}

TEST_F(Plugin, MissingLibraryOfTheModuleGivesTheLoadersReason) {
  const std::string e = load_error("libsim_test_needs_dep.so", "sim_test_needs_dep", {kModules});
  EXPECT_EQ(e.rfind("cannot load module " + kModules + "/libsim_test_needs_dep.so: ", 0), 0u) << e;
  EXPECT_NE(e.find("libsim_test_dep.so: cannot open shared object file"), std::string::npos) << e;
}

TEST_F(Plugin, FileThatIsNoModuleIsAnErrorNotACrash) {
  fs::create_directories(path("junk"));
  std::ofstream(path("junk/" + kAnswer)) << "not a shared object\n";
  // Found first, so it is the one loaded: no silent fall-back to another copy.
  const std::string e = load_error(kAnswer, "sim_test_answer", {path("junk"), kModules});
  EXPECT_EQ(e.rfind("cannot load module " + path("junk/" + kAnswer) + ": ", 0), 0u) << e;
}

TEST(PluginDirs, EnvironmentThenExecutableFolderThenBuildFolder) {
  const char* before = std::getenv("SIM_MODULE_DIR");
  const std::string saved = before ? before : "";
  ::setenv("SIM_MODULE_DIR", "/opt/sim-modules", 1);
  const std::vector<std::string> dirs = module_dirs();
  ASSERT_GE(dirs.size(), 2u);
  EXPECT_EQ(dirs[0], "/opt/sim-modules");
  EXPECT_EQ(dirs[1], fs::read_symlink("/proc/self/exe").parent_path().string());
  EXPECT_EQ(dirs.back(), SIM_BUILD_DIR);
  ::unsetenv("SIM_MODULE_DIR");
  EXPECT_EQ(module_dirs().front(), dirs[1]);
  if (before) ::setenv("SIM_MODULE_DIR", saved.c_str(), 1);
}

}  // namespace
}  // namespace sim
