#include "presets/system_folder.h"

#include <filesystem>

#include "core/error.h"

namespace sim::presets {

void use_system_folder(std::string& system, std::string& network, std::string& folder_without_network) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (system.empty()) return;
  // A path that is not there: said here, before a missing network.yml would be blamed.
  if (!fs::exists(system, ec)) throw InputError("--system " + system + ": no such file or folder");
  if (!fs::is_directory(system, ec)) return;
  const fs::path dir(system);
  if (!fs::is_regular_file(dir / "system.yml", ec)) {
    throw InputError("system config '" + system + "' is not a regular file (it is a directory) and holds no "
                     "system.yml (a folder must be one `sim system gen` wrote)");
  }
  if (network.empty() && fs::is_regular_file(dir / "network.yml", ec)) network = (dir / "network.yml").string();
  else if (network.empty()) folder_without_network = system;
  system = (dir / "system.yml").string();
}

}  // namespace sim::presets
