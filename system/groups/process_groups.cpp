#include "system/groups/process_groups.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/input_file.h"
#include "core/rank_ranges.h"
#include "core/strict_json.h"
#include "system/groups/comm_group_file.h"

namespace sim {

namespace {


std::vector<std::uint32_t> ranks_of(const nlohmann::json& list, const std::string& what) {
  if (!list.is_array()) throw InputError(what + ": expected a list of ranks");
  std::vector<std::uint32_t> ranks;
  for (const auto& r : list) {
    if (!r.is_number_unsigned() || r.get<std::uint64_t>() > 0xffffffffull) {
      throw InputError(what + ": ranks must be non-negative integers, got " + r.dump());
    }
    ranks.push_back(r.get<std::uint32_t>());
  }
  return ranks;
}

}  // namespace

nlohmann::json read_json_object(const std::string& path, const std::string& what, const std::string& form) {
  // One strict reader for every input file: regular files only, duplicate keys refused.
  const nlohmann::json j = parse_json_strict(read_input_file(path, what), path);
  if (!j.is_object()) throw InputError(path + ": expected an object " + form);
  return j;
}

std::map<std::string, std::vector<std::uint32_t>> load_comm_groups(const std::string& path) {
  return parse_comm_groups(read_input_file(path, "communicator file"), path);
}

std::vector<ProcessGroup> parse_pg_metadata(std::string_view values, const std::string& where) {
  // The JSON list sits inside a Python list literal ['...']: take the text
  // from the first '[' followed by '{' to the last ']' preceded by '}'.
  std::vector<ProcessGroup> out;
  const std::size_t open = values.find("[{");
  const std::size_t close = values.rfind("}]");
  if (open == std::string_view::npos || close == std::string_view::npos || close < open) return out;
  // The strict reader: a hostile trace can nest this list deep enough to
  // overflow the stack of nlohmann's recursive dump and copy.
  nlohmann::json j;
  try {
    j = parse_json_strict(std::string(values.substr(open, close + 2 - open)), "inputs.values");
  } catch (const InputError& e) {
    throw InputError(where + ": process-group metadata (inputs.values) is not a JSON list: " + e.what());
  }
  for (const auto& item : j) {
    if (!item.is_object() || !item.contains("pg_name")) continue;
    const auto& name = item["pg_name"];
    ProcessGroup g;
    g.name = name.is_string() ? name.get<std::string>() : name.dump();
    const std::string what = where + ": process group '" + g.name + "'";
    if (item.contains("ranks")) g.ranks = ranks_of(item["ranks"], what);
    g.source = where;
    out.push_back(std::move(g));
  }
  return out;
}

std::optional<std::string> numeric_key(std::string_view name) {
  if (name.empty()) return std::nullopt;
  double v = 0;
  const auto [end, ec] = std::from_chars(name.data(), name.data() + name.size(), v);
  if (ec != std::errc() || end != name.data() + name.size() || !std::isfinite(v) || v < 0 || v != std::floor(v) ||
      v > 9.0e15) {
    return std::nullopt;
  }
  return std::to_string(static_cast<std::uint64_t>(v));
}

void ProcessGroups::define(ProcessGroup group) {
  if (group.ranks.empty() && world_ > 0) {
    for (std::uint32_t r = 0; r < world_; ++r) group.ranks.push_back(r);
  }
  std::vector<std::uint32_t> sorted = group.ranks;
  std::sort(sorted.begin(), sorted.end());
  for (std::size_t i = 0; i < sorted.size(); ++i) {
    if (world_ > 0 && sorted[i] >= world_) {
      throw InputError(group.source + ": process group '" + group.name + "' lists rank " + std::to_string(sorted[i]) +
                       " but the job has " + std::to_string(world_) + " ranks (0.." + std::to_string(world_ - 1) + ")");
    }
    if (i > 0 && sorted[i] == sorted[i - 1]) {
      throw InputError(group.source + ": process group '" + group.name + "' lists rank " + std::to_string(sorted[i]) +
                       " twice");
    }
  }
  if (const ProcessGroup* old = find(group.name)) {
    if (old->ranks != group.ranks) {
      throw InputError("process group '" + group.name + "' is defined twice with different ranks: " + old->source +
                       " gives " + rank_sequence(old->ranks) + ", " + group.source + " gives " + rank_sequence(group.ranks));
    }
    return;  // the same group again (every rank's METADATA node repeats it)
  }
  std::string name = group.name;
  groups_.emplace(std::move(name), std::move(group));
}

void ProcessGroups::define_all(const std::map<std::string, std::vector<std::uint32_t>>& groups,
                               const std::string& source) {
  for (const auto& [name, ranks] : groups) define(ProcessGroup{name, ranks, source});
}

const ProcessGroup* ProcessGroups::find(std::string_view name) const {
  if (const auto it = groups_.find(std::string(name)); it != groups_.end()) return &it->second;
  const auto key = numeric_key(name);
  if (!key) return nullptr;
  for (const auto& [defined, g] : groups_) {
    if (numeric_key(defined) == key) return &g;
  }
  return nullptr;
}

const ProcessGroup* ProcessGroups::resolve(std::string_view pg_name, const std::string& where) const {
  if (pg_name.empty()) return nullptr;
  if (const ProcessGroup* g = find(pg_name)) return g;
  // PyTorch's default group: a trace whose job never defined a group names it "0". Only when no
  // source defines any group; once groups exist, an undefined "0" is as wrong as any other name.
  if (numeric_key(pg_name) == "0" && groups_.empty()) return nullptr;
  throw InputError(where + ": pg_name '" + std::string(pg_name) + "' names no process group; defined: " + describe() +
                   " (groups come from --comm-group files and the trace's process-group METADATA nodes)");
}

std::string ProcessGroups::describe() const {
  if (groups_.empty()) return "none";
  std::string s;
  std::size_t shown = 0;
  for (const auto& [name, g] : groups_) {
    if (shown++ == 16) {
      s += ", ... (" + std::to_string(groups_.size()) + " groups)";
      break;
    }
    s += (s.empty() ? "'" : ", '") + name + "' " + rank_sequence(g.ranks);
  }
  return s;
}

}  // namespace sim
