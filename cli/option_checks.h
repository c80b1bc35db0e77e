// Checks of option values that several commands share.
#pragma once

#include <CLI/CLI.hpp>
#include <string>

namespace sim {

// An option given an empty value (`--system ''`, a shell variable left unset)
// was taken as not given: the run went on with the default, exit 0. `what` is
// what the value names: "path" or "value".
inline CLI::Validator not_empty(const std::string& what) {
  return CLI::Validator(
      [what](const std::string& value) {
        return value.empty() ? "an empty " + what + ": give one, or leave the option out" : std::string();
      },
      "");
}

}  // namespace sim
