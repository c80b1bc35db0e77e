// A test module linked against a library it cannot find at load time (no
// rpath to it): stands for libsim_ns3.so when ns-3's libraries are missing.
extern "C" int sim_test_dep_value();

extern "C" int sim_test_needs_dep() { return sim_test_dep_value(); }
