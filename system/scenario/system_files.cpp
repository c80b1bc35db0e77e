#include "system/scenario/system_files.h"

#include <filesystem>

#include "core/input_file.h"
#include "system/astrasim/astrasim_system.h"
#include "system/registry/algorithm_choices.h"

namespace sim {

namespace {

bool looks_like_json(const std::string& path, const std::string& text) {
  if (std::filesystem::path(path).extension() == ".json") return true;
  const auto first = text.find_first_not_of(" \t\r\n");
  return first != std::string::npos && text[first] == '{';
}

}  // namespace

SystemConfig parse_system_text(const std::string& text, const std::string& source) {
  SystemConfig config = looks_like_json(source, text) ? parse_astrasim_system(text, source)
                                                      : parse_system_config(text, source);
  check_algorithm_choices(config);
  return config;
}

SystemConfig load_system_config(const std::string& path) {
  return parse_system_text(read_input_file(path, "system config"), path);
}

}  // namespace sim
