// The communicator file: {"<pg_name>": [global ranks...]}, read strictly.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace sim {

// pg_name -> members from the file's text (`path` names it in messages),
// names as written. InputError naming the file, line and key for bad JSON,
// duplicate keys, an empty list or a rank outside 0..2^31-1.
std::map<std::string, std::vector<std::uint32_t>> parse_comm_groups(const std::string& text, const std::string& path);

}  // namespace sim
