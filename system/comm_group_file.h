// The communicator file: {"<pg_name>": [global ranks...]}, read strictly.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace sim {

// pg_name -> members from the file's text (`path` names it in messages);
// "0" is stored as "" (the world). InputError naming the file, line and key
// for bad JSON, duplicate keys, a rank outside 0..2^31-1, or the world twice.
std::map<std::string, std::vector<std::uint32_t>> parse_comm_groups(const std::string& text, const std::string& path);

}  // namespace sim
