// The library needs_dep_module links against, kept out of the loader's path.
extern "C" int sim_test_dep_value() { return 7; }
