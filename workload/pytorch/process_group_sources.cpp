#include "workload/pytorch/process_group_sources.h"

#include <algorithm>
#include <charconv>
#include <map>

#include "core/error.h"
#include "core/strict_json.h"

namespace sim::pytorch {

namespace {

using json = nlohmann::json;

bool numeric(const std::string& s, std::uint64_t& v) {
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  return ec == std::errc() && end == s.data() + s.size();
}

std::string name_of(const json& g) {
  const json& n = g.at("pg_name");
  return n.is_string() ? n.get<std::string>() : n.dump();
}

void read_list(const json& list, const std::string& where, std::vector<PgDef>& out) {
  if (!list.is_array()) throw InputError(where + " is not a list of process groups");
  for (const json& g : list) {
    if (!g.is_object() || !g.contains("pg_name")) throw InputError(where + " holds an entry without pg_name");
    PgDef d;
    d.name = name_of(g);
    if (auto r = g.find("ranks"); r != g.end()) {
      if (!r->is_array()) throw InputError(where + ": group '" + d.name + "': ranks is not a list");
      for (const json& x : *r) {
        if (!x.is_number_integer() || x.get<std::int64_t>() < 0) {
          throw InputError(where + ": group '" + d.name + "': ranks holds " + x.dump() + ", not a rank");
        }
        d.ranks.push_back(x.get<std::int64_t>());
      }
    }
    if (auto desc = g.find("pg_desc"); desc != g.end() && desc->is_string()) d.desc = desc->get<std::string>();
    if (auto b = g.find("backend_id"); b != g.end() && b->is_number_integer()) d.backend_id = b->get<std::int64_t>();
    out.push_back(std::move(d));
  }
}

}  // namespace

RankGroups rank_groups(const HostTrace& host, const KinetoTrace* kineto, int rank) {
  RankGroups out;
  std::vector<PgDef> from_host;
  for (const HostOp& op : host.ops) {
    if (op.name.find("process_group:init") == std::string::npos) continue;
    const std::string where = host.path + ": rank " + std::to_string(rank) + ": op id " + std::to_string(op.id) +
                              " (" + op.name + "): field 'inputs.values[0]'";
    if (!op.input_values.is_array() || op.input_values.empty() || !op.input_values[0].is_string()) {
      throw InputError(where + " is not the JSON text of the process groups");
    }
    json list;
    try {
      list = parse_json_strict(op.input_values[0].get<std::string>(), where);
    } catch (const InputError& e) {
      throw InputError(where + " is not JSON: " + e.what());
    }
    read_list(list, where, from_host);
  }
  if (kineto && !kineto->pg_config.is_null()) {
    read_list(kineto->pg_config, kineto->path + ": rank " + std::to_string(rank) + ": field 'distributedInfo.pg_config'",
              out.groups);
    out.source = "Kineto distributedInfo.pg_config";
    for (PgDef& g : out.groups) {  // 1.0.x record_param_comms name groups by backend_id: keep it
      for (const PgDef& h : from_host) {
        if (h.name == g.name) g.backend_id = h.backend_id;
      }
    }
    for (const PgDef& h : from_host) {  // a group only the host lists is still a group
      if (std::none_of(out.groups.begin(), out.groups.end(), [&](const PgDef& g) { return g.name == h.name; })) {
        out.groups.push_back(h);
      }
    }
  } else if (!from_host.empty()) {
    out.groups = std::move(from_host);
    out.source = "host process_group:init";
  }
  // Creation order: numeric names ascending, others after, in listed order.
  std::stable_sort(out.groups.begin(), out.groups.end(), [](const PgDef& a, const PgDef& b) {
    std::uint64_t x = 0, y = 0;
    const bool na = numeric(a.name, x), nb = numeric(b.name, y);
    if (na != nb) return na;
    return na && x < y;
  });
  return out;
}

void assign_groups(std::vector<CommOp>& ops, const RankGroups& groups, const HostTrace& host, const TraceLinks& links,
                   const KinetoTrace* kineto, int rank, GroupInference& counts) {
  const std::vector<PgDef>& g = groups.groups;
  // gloo worker threads, sorted, cut into g.size() runs at the largest gaps.
  std::map<std::int64_t, std::size_t> group_of_thread;
  if (kineto && g.size() > 1) {
    std::vector<std::int64_t> tids;
    for (const CommOp& c : ops) {
      if (c.backend != "gloo" || c.work_op < 0) continue;
      const std::int32_t k = links.kineto_of[static_cast<std::size_t>(c.work_op)];
      if (k >= 0) tids.push_back(kineto->ops[static_cast<std::size_t>(k)].tid);
    }
    std::sort(tids.begin(), tids.end());
    tids.erase(std::unique(tids.begin(), tids.end()), tids.end());
    if (tids.size() >= g.size()) {
      std::vector<std::size_t> cuts;  // index i: a cut between tids[i-1] and tids[i]
      for (std::size_t i = 1; i < tids.size(); ++i) cuts.push_back(i);
      std::stable_sort(cuts.begin(), cuts.end(),
                       [&](std::size_t a, std::size_t b) { return tids[a] - tids[a - 1] > tids[b] - tids[b - 1]; });
      cuts.resize(g.size() - 1);
      std::sort(cuts.begin(), cuts.end());
      std::size_t group = 0;
      for (std::size_t i = 0; i < tids.size(); ++i) {
        if (group < cuts.size() && cuts[group] == i) ++group;
        group_of_thread[tids[i]] = group;
      }
    }
  }
  auto defined = [&](const std::string& name) {
    return std::any_of(g.begin(), g.end(), [&](const PgDef& d) { return d.name == name; });
  };
  for (CommOp& c : ops) {
    const HostOp& op = host.ops[c.op];
    if (c.pg_name.empty() && c.backend_id >= 0) {
      for (const PgDef& d : g) {
        if (d.backend_id == c.backend_id) {
          c.pg_name = d.name;
          c.pg_source = "record_param_comms backend_id";
          ++counts.by_backend_id;
        }
      }
    }
    if (!c.pg_name.empty()) {
      if (!g.empty() && !defined(c.pg_name)) {
        std::string names;
        for (const PgDef& d : g) names += (names.empty() ? "'" : ", '") + d.name + "'";
        throw InputError(host.path + ": rank " + std::to_string(rank) + ": op id " + std::to_string(op.id) + " (" +
                         op.name + "): its " + c.pg_source + " names process group '" + c.pg_name +
                         "', which the rank's process-group records (" + groups.source + ") do not define; defined: " +
                         names);
      }
      continue;
    }
    if (g.size() == 1) {
      c.pg_name = g[0].name;
      c.pg_source = "the rank's only process group";
      ++counts.only_group;
      continue;
    }
    if (c.work_op >= 0 && !group_of_thread.empty()) {
      const std::int32_t k = links.kineto_of[static_cast<std::size_t>(c.work_op)];
      if (k >= 0) {
        auto it = group_of_thread.find(kineto->ops[static_cast<std::size_t>(k)].tid);
        if (it != group_of_thread.end()) {
          c.pg_name = g[it->second].name;
          c.pg_source = "gloo worker thread";
          ++counts.by_thread;
          continue;
        }
      }
    }
    if (!g.empty()) {
      c.pg_name = defined("0") ? "0" : g[0].name;
      c.pg_source = "default group";
      ++counts.by_default;
    }
  }
}

std::string metadata_values(const RankGroups& groups) {
  json list = json::array();
  for (const PgDef& d : groups.groups) {
    json g = {{"pg_name", d.name}, {"ranks", d.ranks}};
    if (!d.desc.empty()) g["pg_desc"] = d.desc;
    list.push_back(std::move(g));
  }
  return list.dump();
}

}  // namespace sim::pytorch
