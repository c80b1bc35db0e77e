// A test module for core/plugin: one entry point that uses a function of the
// executable (sim_core's parse_size), as libsim_ns3.so uses the simulator's.
#include <cstdint>

#include "core/units.h"

extern "C" std::uint64_t sim_test_answer() { return sim::parse_size("42"); }

// The address the module binds parse_size to: the executable's own copy.
extern "C" const void* sim_test_parse_size_address() { return reinterpret_cast<const void*>(&sim::parse_size); }
