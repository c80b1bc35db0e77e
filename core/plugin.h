// Optional parts of the simulator built as shared modules (build/libsim_ns3.so,
// build/libsim_mpi.so), loaded with dlopen the first time a run needs them, so
// a run that does not use ns-3 or MPI neither maps their libraries nor runs
// their static initialisers.
//
// A module links only its foreign library (ns-3, OpenMPI) and uses the
// simulator's own symbols from the executable (linked with ENABLE_EXPORTS):
// one copy of every piece of the simulator's state per process.
#pragma once

#include <string>
#include <vector>

#include "core/error.h"

namespace sim {

// A module that cannot be found or loaded, or lacks its entry point (exit 2).
class ModuleError : public InputError {
 public:
  using InputError::InputError;
};

// Where modules are looked for, in order: $SIM_MODULE_DIR (when set), the
// folder of the running executable, the build folder baked in at configure
// time (so build/sim and the tests under build/tests find them).
std::vector<std::string> module_dirs();

// The first dirs[i]/file that exists, or "" when none does.
std::string find_module(const std::string& file, const std::vector<std::string>& dirs = module_dirs());

// The address of the extern "C" `symbol` in module `file`: the first one
// found in `dirs`, loaded once per process and never unloaded. Throws
// ModuleError naming the file and every folder searched (not found), the
// path and the loader's reason (a library it needs is missing), or the symbol.
void* module_symbol(const std::string& file, const std::string& symbol,
                    const std::vector<std::string>& dirs = module_dirs());

// module_symbol, typed: F is the entry point's function type.
template <class F>
F* module_function(const std::string& file, const std::string& symbol,
                   const std::vector<std::string>& dirs = module_dirs()) {
  return reinterpret_cast<F*>(module_symbol(file, symbol, dirs));
}

}  // namespace sim
