// MPI ranks as a sweep Communicator. The MPI code lives in its own module,
// build/libsim_mpi.so (built only with Debian's OpenMPI, linked against it),
// loaded (core/plugin.h) only when mpirun started this process: `sim` itself
// does not link OpenMPI, so no other run maps its libraries.
#pragma once

#include <memory>

#include "workflows/sweep/sweep_runner.h"

namespace sim::workflows {

// When this process was started by mpirun/mpiexec (OMPI_COMM_WORLD_SIZE,
// PMI_SIZE or PMIX_RANK set): the module loaded, MPI initialised, the world
// communicator; else null, so a plain `sim sweep` never pays for MPI. MPI is
// finalised when the returned object is destroyed. Throws ModuleError (exit 2)
// when launched by mpirun but the module or OpenMPI's libraries are missing.
std::unique_ptr<Communicator> mpi_communicator_if_launched();

// The module's file and its one entry point, looked up by name.
inline constexpr const char* kMpiModuleFile = "libsim_mpi.so";
inline constexpr const char* kMpiEntryPoint = "sim_mpi_communicator";
// Initialises MPI and returns the world communicator; the caller owns it.
using MpiMakeCommunicator = Communicator*();

}  // namespace sim::workflows

extern "C" sim::workflows::MpiMakeCommunicator sim_mpi_communicator;
