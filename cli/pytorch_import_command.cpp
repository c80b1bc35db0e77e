#include "pytorch_import_command.h"

#include <sys/resource.h>

#include <chrono>
#include <cstdio>

#include "core/error.h"
#include "workload/pytorch/pytorch_import.h"

namespace sim {

void add_pytorch_import_command(CLI::App& workload, PytorchImportCommand& c) {
  CLI::App* import = workload.add_subcommand("import", "convert traces of real jobs into per-rank Chakra ETs");
  import->require_subcommand(1);
  c.app = import->add_subcommand(
      "pytorch",
      "PyTorch host execution traces (ExecutionTraceObserver) and Kineto device traces -> <prefix>.<rank>.et "
      "(docs/traces.md, \"PyTorch traces\")");
  c.app->add_option("--host-et", c.host_et,
                    "host execution traces: a folder, a prefix or one file per rank (.json, .json.gz); repeatable")
      ->required();
  c.app->add_option("--kineto", c.kineto,
                    "Kineto device traces, one per rank, given the same way (optional: without them CPU operators "
                    "take the host trace's durations or 0 and there are no GPU kernels)");
  c.app->add_option("-o,--output", c.prefix, "output prefix: writes <prefix>.<rank>.et")->required();
}

int run_pytorch_import_command(const PytorchImportCommand& c, std::ostream& out, std::ostream& err) {
  const auto start = std::chrono::steady_clock::now();
  const std::vector<pytorch::RankFiles> files = pytorch::resolve_pytorch_files(c.host_et, c.kineto);
  const pytorch::ImportSummary summary = pytorch::import_pytorch_to_files(files, c.prefix);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  for (const std::string& w : summary.warnings) err << "sim: warning: " << w << "\n";
  for (const std::string& line : summary.lines) out << line << "\n";
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  char line[160];
  std::snprintf(line, sizeof line, "import time %.3f s, peak memory %ld MiB\n", seconds, ru.ru_maxrss / 1024);
  out << "wrote " << files.size() << (files.size() == 1 ? " file " : " files ") << c.prefix << ".{0.."
      << files.size() - 1 << "}.et" << summary.removed_note << "\n"
      << line;
  return kExitOk;
}

}  // namespace sim
