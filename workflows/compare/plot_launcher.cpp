#include "workflows/compare/plot_launcher.h"

#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>

#include "core/error.h"

namespace sim::workflows {

std::string plot_script_path() {
  namespace fs = std::filesystem;
  if (const char* env = std::getenv("SIM_PLOT_SCRIPT"); env && *env) return env;
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    for (const fs::path& up : {exe.parent_path().parent_path(), exe.parent_path().parent_path().parent_path()}) {
      const fs::path candidate = up / "scripts" / "plot_results.py";
      if (fs::is_regular_file(candidate)) return candidate.string();
    }
  }
  return std::string(SIM_SOURCE_DIR) + "/scripts/plot_results.py";
}

int run_plot_script(const std::string& prog, const std::vector<std::string>& args) {
  const std::string script = plot_script_path();
  if (!std::filesystem::is_regular_file(script)) {
    throw InputError("cannot find the plotting script " + script + " (set SIM_PLOT_SCRIPT)");
  }
  // Debian's interpreter, which has python3-matplotlib; a python3 earlier on
  // PATH (pyenv, a venv) usually does not.
  const std::string python = std::filesystem::exists("/usr/bin/python3") ? "/usr/bin/python3" : "python3";
  std::vector<std::string> argv_text{python, script, "--prog", prog};
  argv_text.insert(argv_text.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (std::string& a : argv_text) argv.push_back(a.data());
  argv.push_back(nullptr);
  const pid_t pid = ::fork();
  if (pid < 0) throw InputError("cannot start python3 for plotting");
  if (pid == 0) {
    ::execvp(argv[0], argv.data());
    _exit(127);
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  if (WIFEXITED(status) && WEXITSTATUS(status) == 127) throw InputError("cannot run python3 (apt-get install python3-matplotlib)");
  return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}

}  // namespace sim::workflows
