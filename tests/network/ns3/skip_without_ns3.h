// The ns3 backend is built only where ns-3 was found at configure time; its
// tests skip with a message elsewhere.
#pragma once

#include <gtest/gtest.h>

#ifndef SIM_HAVE_NS3
#define SKIP_WITHOUT_NS3() GTEST_SKIP() << "ns-3 not found at configure time: the ns3 backend is not built"
#else
#define SKIP_WITHOUT_NS3() (void)0
#endif
