#include <cstdlib>
#include <string>

#include "core/plugin.h"
#include "workflows/sweep/mpi_sweep.h"

namespace sim::workflows {

std::unique_ptr<Communicator> mpi_communicator_if_launched() {
  const char* launcher = nullptr;
  for (const char* v : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK"}) {
    if (!launcher && std::getenv(v)) launcher = v;
  }
  if (!launcher) return nullptr;
  MpiMakeCommunicator* make = nullptr;
  try {
    make = module_function<MpiMakeCommunicator>(kMpiModuleFile, kMpiEntryPoint);
  } catch (const ModuleError& e) {
    throw ModuleError("sim sweep under mpirun (" + std::string(launcher) + " is set): " + e.what() +
                      "; install libopenmpi-dev (scripts/setup.sh) and rebuild, or run the sweep without mpirun");
  }
  return std::unique_ptr<Communicator>(make());
}

}  // namespace sim::workflows
