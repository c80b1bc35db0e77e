#include "core/plugin.h"

#include <dlfcn.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <map>
#include <mutex>
#include <system_error>

namespace sim {

namespace {

std::string executable_dir() {
  std::error_code ec;
  const std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? std::string() : exe.parent_path().string();
}

// Loaded modules by path. dlopen is thread-safe; the map keeps repeated
// look-ups (one per network built in a sweep) from reopening the file.
std::mutex loaded_mutex;
std::map<std::string, void*>& loaded() {
  static std::map<std::string, void*> handles;
  return handles;
}

std::string searched(const std::vector<std::string>& dirs) {
  std::string s;
  for (const std::string& d : dirs) s += (s.empty() ? "" : ", ") + d;
  return s.empty() ? "no folder" : s;
}

}  // namespace

std::vector<std::string> module_dirs() {
  std::vector<std::string> dirs;
  const auto add = [&dirs](const std::string& d) {
    if (d.empty()) return;
    for (const std::string& seen : dirs) {
      if (seen == d) return;
    }
    dirs.push_back(d);
  };
  if (const char* env = std::getenv("SIM_MODULE_DIR")) add(env);
  add(executable_dir());
  add(SIM_MODULE_BUILD_DIR);
  return dirs;
}

std::string find_module(const std::string& file, const std::vector<std::string>& dirs) {
  for (const std::string& d : dirs) {
    const std::string path = d + "/" + file;
    if (::access(path.c_str(), F_OK) == 0) return path;
  }
  return "";
}

void* module_symbol(const std::string& file, const std::string& symbol, const std::vector<std::string>& dirs) {
  const std::string path = find_module(file, dirs);
  if (path.empty()) {
    throw ModuleError("module " + file + " not found (looked in " + searched(dirs) +
                      "; set SIM_MODULE_DIR to the folder that holds it)");
  }
  void* handle = nullptr;
  {
    const std::lock_guard<std::mutex> lock(loaded_mutex);
    void*& h = loaded()[path];
    if (!h) {
      // RTLD_NOW: a symbol missing from the module's libraries or from the
      // executable fails here, with the loader's message, not mid-run.
      h = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
      if (!h) {
        const char* why = ::dlerror();
        loaded().erase(path);
        throw ModuleError("cannot load module " + path + ": " + (why ? why : "unknown reason"));
      }
    }
    handle = h;
  }
  ::dlerror();
  void* address = ::dlsym(handle, symbol.c_str());
  if (!address) throw ModuleError("module " + path + " has no entry point '" + symbol + "' (built from other sources?)");
  return address;
}

}  // namespace sim
