// What every fuzz harness shares: run one input through a reader, accept the
// errors users are promised (sim::SimError: exit 2 or 3 with a message), and
// crash on anything else so libFuzzer (or the replay driver) reports it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>

#include "core/error.h"

namespace sim::fuzz {

template <class F>
void expect_clean(const char* harness, F&& body) {
  try {
    body();
  } catch (const SimError& e) {
    if (e.what()[0] == '\0') {  // every promised error carries a message
      std::fprintf(stderr, "%s: SimError without a message\n", harness);
      std::abort();
    }
  } catch (const std::exception& e) {  // would be sim's "internal error", exit 1
    std::fprintf(stderr, "%s: unexpected exception: %s\n", harness, e.what());
    std::abort();
  }
}

inline std::string text_of(const std::uint8_t* data, std::size_t size) {
  return std::string(reinterpret_cast<const char*>(data), size);
}

}  // namespace sim::fuzz
