// MPI ranks as a sweep Communicator (built only with Debian's OpenMPI).
#pragma once

#include <memory>

#include "workflows/sweep_runner.h"

namespace sim::workflows {

// When this process was started by mpirun/mpiexec (OMPI_COMM_WORLD_SIZE or
// PMI_SIZE set): MPI initialised, the world communicator; else null, so a
// plain `sim sweep` never pays for MPI start-up. MPI is finalised when the
// returned object is destroyed.
std::unique_ptr<Communicator> mpi_communicator_if_launched();

}  // namespace sim::workflows
