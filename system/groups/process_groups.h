// Process groups (communicators): the one rule by which a COMM_COLL node's
// `pg_name` names its ranks, used by every command line.
//
// Groups are defined by a comm-group JSON file ({"<name>": [ranks...]}) and
// by the PyTorch process-group METADATA nodes Chakra's converter writes into
// traces (inputs.values holds a list of {"pg_name", "ranks", ...}; empty
// ranks mean every rank). The rule, in order:
//   1. pg_name absent or "" means all ranks of the job;
//   2. a name some source defines is that group -- "0" included;
//   3. a numeric name finds the group whose name is the same number written
//      another way ("4.0" and "04" find "4");
//   4. a name equal to 0 that nothing defines means all ranks (PyTorch's
//      default group; ASTRA-sim always reads id 0 this way, even when its
//      file defines "0" -- the one place it reads a file differently);
//   5. anything else is an error naming the file, rank, node, the pg_name
//      and the groups that exist.
// Two sources defining one name with different ranks are an error naming both.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json_fwd.hpp>  // callers of read_json_object include json.hpp
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sim {

struct ProcessGroup {
  std::string name;                  // as defined
  std::vector<std::uint32_t> ranks;  // in the order defined (group positions); empty in a definition: all ranks
  std::string source;                // "groups.json" or "t.0.et: rank 0, node 3 'pg_init' (METADATA)"
};

// A JSON file whose top level is an object (`form` says which, for the
// message); throws InputError naming the file.
nlohmann::json read_json_object(const std::string& path, const std::string& what, const std::string& form);

// A comm-group JSON file {"<name>": [ranks...]}: every name kept as written.
// Throws InputError naming the file and key.
std::map<std::string, std::vector<std::uint32_t>> load_comm_groups(const std::string& path);

// The groups a METADATA node's inputs.values defines: PyTorch writes a
// Python list of one JSON string, e.g. ['[{"pg_name": "0", "ranks": []}]'].
// Text without any {"pg_name" ...} object defines nothing. Throws InputError
// prefixed with `where` when the JSON inside is malformed.
std::vector<ProcessGroup> parse_pg_metadata(std::string_view values, const std::string& where);

// "4.0", "04", "4" -> "4"; nullopt when `name` is not an integral number.
std::optional<std::string> numeric_key(std::string_view name);

class ProcessGroups {
 public:
  // `world`: the job's rank count (a definition with no ranks means all of them).
  explicit ProcessGroups(std::uint32_t world = 0) : world_(world) {}
  // Adds a definition; the same name with other ranks (after numeric
  // matching) throws InputError naming both sources.
  void define(ProcessGroup group);
  void define_all(const std::map<std::string, std::vector<std::uint32_t>>& groups, const std::string& source);

  // The group `pg_name` names by the rule above; nullptr: all ranks. Throws
  // InputError starting with `where` (file, rank, node) when nothing matches.
  const ProcessGroup* resolve(std::string_view pg_name, const std::string& where) const;

  // "'0' [0, 1], '4' [0, 4, 8, 12]" (or "none"), for messages.
  std::string describe() const;
  bool empty() const { return groups_.empty(); }
  const std::map<std::string, ProcessGroup>& all() const { return groups_; }

 private:
  const ProcessGroup* find(std::string_view name) const;
  std::uint32_t world_;
  std::map<std::string, ProcessGroup> groups_;
};

}  // namespace sim
