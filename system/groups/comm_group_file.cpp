#include "system/groups/comm_group_file.h"

#include "core/error.h"
#include "core/strict_json.h"

namespace sim {

std::map<std::string, std::vector<std::uint32_t>> parse_comm_groups(const std::string& text, const std::string& path) {
  const nlohmann::json j = parse_json_strict(text, path);
  if (!j.is_object()) throw InputError(path + ": expected an object {\"<pg_name>\": [ranks...]}");
  std::map<std::string, std::vector<std::uint32_t>> groups;
  for (const auto& [name, ranks] : j.items()) {
    const std::string at = json_key_place(text, path, name) + ": key '" + name + "'";
    if (!ranks.is_array() || ranks.empty()) throw InputError(at + ": expected a list of ranks");
    std::vector<std::uint32_t> members;
    for (const auto& r : ranks) {
      // Range-checked: 2^32 + 1 must not become rank 1.
      if (!r.is_number_unsigned() || r.get<std::uint64_t>() > 0x7fffffffu) {
        throw InputError(at + ": ranks must be integers 0..2147483647, got " + r.dump());
      }
      members.push_back(r.get<std::uint32_t>());
    }
    // Names stay as written: "0" is the group the file defines
    // (system/groups/process_groups.h has the rule that resolves pg_names).
    groups[name] = std::move(members);
  }
  return groups;
}

}  // namespace sim
