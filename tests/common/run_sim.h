// Runs the built `sim` binary (SIM_BINARY) and captures its exit code and output.
#pragma once

#include <sys/wait.h>

#include <cstdio>
#include <string>

#include "source_paths.h"

namespace sim::testing {

struct SimRun {
  int code;
  std::string output;  // stdout and stderr
};

// Runs a shell command line (stderr is the caller's to redirect).
inline SimRun run_shell(const std::string& cmd) {
  FILE* pipe = popen(cmd.c_str(), "r");
  if (!pipe) return {-1, ""};
  std::string out;
  char buf[4096];
  for (std::size_t n; (n = fread(buf, 1, sizeof buf, pipe)) > 0;) out.append(buf, n);
  const int status = pclose(pipe);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out};
}

inline SimRun run_sim(const std::string& args) { return run_shell(std::string(SIM_BINARY) + " " + args + " 2>&1"); }

}  // namespace sim::testing
