#include "system/report.h"

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "core/error.h"
#include "core/units.h"

namespace sim {

namespace {

double bus_factor(const CollectiveRecord& c) {
  const double n = c.group_size;
  if (n <= 1) return 0;
  switch (c.type) {
    case CollectiveType::kAllReduce: return 2 * (n - 1) / n;
    case CollectiveType::kAllGather:
    case CollectiveType::kReduceScatter:
    case CollectiveType::kAllToAll: return (n - 1) / n;
    default: return 1;
  }
}

double algbw_bytes(const CollectiveRecord& c) {
  const double s = static_cast<double>(c.bytes);
  return c.type == CollectiveType::kAllGather ? s * c.group_size : s;
}

std::string fixed(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

// Links that carried traffic, hottest (highest utilisation) first; ties by link id.
std::vector<std::size_t> hottest_links(const SimulationResult& r) {
  std::vector<std::size_t> ids;
  for (std::size_t i = 0; i < r.links.size(); ++i) {
    if (r.links[i].usage.bytes > 0) ids.push_back(i);
  }
  std::stable_sort(ids.begin(), ids.end(), [&](std::size_t a, std::size_t b) {
    return link_utilization(r.links[a], r.makespan) > link_utilization(r.links[b], r.makespan);
  });
  return ids;
}

double busy_fraction(const LinkRecord& l, Time makespan) {
  return makespan > 0 ? static_cast<double>(l.usage.busy) / static_cast<double>(makespan) : 0;
}

}  // namespace

double link_utilization(const LinkRecord& l, Time makespan) {
  if (makespan <= 0 || l.bandwidth == 0) return 0;
  return static_cast<double>(l.usage.bytes) / (static_cast<double>(l.bandwidth) * (static_cast<double>(makespan) / kSecond));
}

std::string node_label(NodeId node, std::uint32_t npu_count) {
  return node < npu_count ? "npu" + std::to_string(node) : "sw" + std::to_string(node - npu_count);
}

double algbw_gbps(const CollectiveRecord& c) {
  if (c.duration <= 0) return 0;
  return algbw_bytes(c) / (static_cast<double>(c.duration) / kSecond) / 1e9;
}

double busbw_gbps(const CollectiveRecord& c) { return algbw_gbps(c) * bus_factor(c); }

void write_file_atomically(const std::string& path, const std::string& content) {
  const std::string tmp = path + ".tmp." + std::to_string(::getpid());
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) throw InputError("cannot write '" + path + "'");
    out << content;
    out.flush();
    if (!out) {
      std::error_code ec;
      std::filesystem::remove(tmp, ec);
      throw InputError("cannot write '" + path + "'");
    }
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) {
    std::filesystem::remove(tmp, ec);
    throw InputError("cannot write '" + path + "': " + ec.message());
  }
}

namespace {
const GroupRecord& group_of(const SimulationResult& r, const CollectiveRecord& c) {
  static const GroupRecord kUnknown;
  return c.group < r.groups.size() ? r.groups[c.group] : kUnknown;
}

std::string dims_text(const std::vector<std::uint32_t>& dims) {
  std::string s = "[";
  for (std::size_t i = 0; i < dims.size(); ++i) s += (i ? ", " : "") + std::to_string(dims[i]);
  return s + "]";
}
}  // namespace

void print_summary(std::ostream& out, const SimulationResult& r, const RunInfo& info) {
  out << "workload:  " << info.workload << " (" << r.ranks.size() << " ranks)\n";
  out << "network:   " << info.topology << ", backend " << info.backend << "\n";
  out << "simulated time: " << format_time(r.makespan) << " (" << format_ns(r.makespan) << " ns)\n";
  for (const JobResult& job : r.jobs) {
    out << "  job " << job.name << " (" << job.ranks << " ranks): " << format_time(job.makespan) << " ("
        << format_ns(job.makespan) << " ns)\n";
  }
  if (!r.ranks.empty()) {
    Time compute = 0, exposed = 0, idle = 0;
    for (const RankStats& s : r.ranks) {
      compute = std::max(compute, s.compute);
      exposed = std::max(exposed, s.exposed_comm);
      idle = std::max(idle, s.idle);
    }
    out << "per rank (max): compute " << format_time(compute) << ", exposed communication " << format_time(exposed)
        << ", idle " << format_time(idle) << "\n";
  }
  // One line per (type, bytes, group, algorithm): count and the slowest instance.
  std::map<std::tuple<int, std::uint64_t, std::uint32_t, std::string, std::string>, std::pair<std::size_t, const CollectiveRecord*>> groups;
  for (const CollectiveRecord& c : r.collectives) {
    auto& g = groups[{static_cast<int>(c.type), c.bytes, c.group_size, c.algorithm, group_of(r, c).label}];
    ++g.first;
    if (!g.second || c.duration > g.second->duration) g.second = &c;
  }
  if (!groups.empty()) out << "collectives (slowest rank of each kind):\n";
  for (const auto& [key, g] : groups) {
    const CollectiveRecord& c = *g.second;
    out << "  " << collective_name(c.type) << " " << format_bytes(c.bytes) << " on " << c.group_size << " ranks";
    const GroupRecord& group = group_of(r, c);
    if (!group.label.empty() && group.label != "all ranks") out << " (" << group.label << ", dims " << dims_text(group.dims) << ")";
    out << " [" << c.algorithm << "] x" << g.first << ": " << format_time(c.duration) << ", algbw " << fixed(algbw_gbps(c), 2)
        << " GB/s, busbw " << fixed(busbw_gbps(c), 2) << " GB/s\n";
  }
  const std::vector<std::size_t> hot = hottest_links(r);
  if (!hot.empty()) {
    out << "hottest links (" << hot.size() << " of " << r.links.size() << " carried traffic"
        << (r.link_time_known ? "" : "; this backend measures bytes only") << "):\n";
    for (std::size_t k = 0; k < hot.size() && k < 3; ++k) {
      const LinkRecord& l = r.links[hot[k]];
      out << "  " << node_label(l.from, r.npu_count) << " -> " << node_label(l.to, r.npu_count) << " ("
          << format_bandwidth(l.bandwidth) << "): " << format_bytes(l.usage.bytes) << ", utilization "
          << fixed(100 * link_utilization(l, r.makespan), 1) << "%";
      if (r.link_time_known) {
        out << ", busy " << fixed(100 * busy_fraction(l, r.makespan), 1) << "%, peak " << l.usage.peak_flows
            << (l.usage.peak_flows == 1 ? " flow" : " flows");
      }
      out << "\n";
    }
  }
  if (!r.network_counters.empty()) {
    out << "network:";
    for (std::size_t i = 0; i < r.network_counters.size(); ++i) {
      out << (i ? ", " : " ") << r.network_counters[i].second << " " << r.network_counters[i].first;
    }
    out << "\n";
  }
  out << "events: " << r.events << ", messages: " << r.messages;
  if (info.wall_seconds > 0) {
    out << ", wall time " << fixed(info.wall_seconds, 3) << " s";
    if (info.simulate_seconds > 0) {
      out << " (loading " << fixed(info.wall_seconds - info.simulate_seconds, 3) << " s, event loop "
          << fixed(info.simulate_seconds, 3) << " s: "
          << fixed(static_cast<double>(r.events) / info.simulate_seconds / 1e6, 2) << " M events/s)";
    }
  }
  out << "\n";
}

void write_json_report(const std::string& path, const SimulationResult& r, const RunInfo& info) {
  using nlohmann::ordered_json;
  ordered_json j;
  j["units"] = {{"time", "ns"}, {"bandwidth", "GB/s (1e9 B/s)"}, {"bytes", "B"}};
  j["workload"] = info.workload;
  j["topology"] = info.topology;
  j["backend"] = info.backend;
  j["sim_time_ns"] = to_ns(r.makespan);
  if (!r.jobs.empty()) {
    ordered_json jobs = ordered_json::array();
    for (const JobResult& job : r.jobs) {
      jobs.push_back({{"name", job.name}, {"sim_time_ns", to_ns(job.makespan)}, {"first_rank", job.first_rank},
                      {"ranks", job.ranks}});
    }
    j["jobs"] = std::move(jobs);
  }
  j["events"] = r.events;
  j["messages"] = r.messages;
  ordered_json ranks = ordered_json::array();
  for (std::size_t i = 0; i < r.ranks.size(); ++i) {
    const RankStats& s = r.ranks[i];
    ranks.push_back({{"rank", i},
                     {"finish_ns", to_ns(s.finish)},
                     {"compute_ns", to_ns(s.compute)},
                     {"exposed_comm_ns", to_ns(s.exposed_comm)},
                     {"comm_ns", to_ns(s.comm)},
                     {"memory_ns", to_ns(s.memory)},
                     {"idle_ns", to_ns(s.idle)},
                     {"nodes", s.nodes}});
  }
  j["ranks"] = std::move(ranks);
  ordered_json colls = ordered_json::array();
  for (const CollectiveRecord& c : r.collectives) {
    colls.push_back({{"rank", c.rank},
                     {"node_id", c.node_id},
                     {"type", collective_name(c.type)},
                     {"bytes", c.bytes},
                     {"group_size", c.group_size},
                     {"group", group_of(r, c).label},
                     {"dims", group_of(r, c).dims},
                     {"npu", c.npu},
                     {"algorithm", c.algorithm},
                     {"start_ns", to_ns(c.start)},
                     {"duration_ns", to_ns(c.duration)},
                     {"algbw_gbps", algbw_gbps(c)},
                     {"busbw_gbps", busbw_gbps(c)}});
  }
  j["collectives"] = std::move(colls);
  // Links that carried traffic (all of them, with zeros, are in --link-stats).
  ordered_json links = ordered_json::array();
  for (std::size_t i = 0; i < r.links.size(); ++i) {
    const LinkRecord& l = r.links[i];
    if (l.usage.bytes == 0) continue;
    ordered_json e = {{"link", i},
                      {"src", node_label(l.from, r.npu_count)},
                      {"dst", node_label(l.to, r.npu_count)},
                      {"bandwidth_gbps", static_cast<double>(l.bandwidth) / 1e9},
                      {"bytes", l.usage.bytes},
                      {"utilization", link_utilization(l, r.makespan)}};
    if (r.link_time_known) {
      e["busy_ns"] = to_ns(l.usage.busy);
      e["busy_fraction"] = busy_fraction(l, r.makespan);
      e["peak_flows"] = l.usage.peak_flows;
    }
    links.push_back(std::move(e));
  }
  j["links"] = std::move(links);
  ordered_json counters = ordered_json::object();
  for (const auto& [name, value] : r.network_counters) counters[name] = value;
  j["network_counters"] = std::move(counters);
  j["warnings"] = r.warnings;
  write_file_atomically(path, j.dump(2) + "\n");
}

void write_csv_report(const std::string& path, const SimulationResult& r) {
  std::ostringstream out;
  out << "rank,node_id,type,bytes,group_size,algorithm,start_ns,duration_ns,algbw_gbps,busbw_gbps\n";
  for (const CollectiveRecord& c : r.collectives) {
    out << c.rank << ',' << c.node_id << ',' << collective_name(c.type) << ',' << c.bytes << ',' << c.group_size << ','
        << c.algorithm << ',' << format_ns(c.start) << ',' << format_ns(c.duration) << ','
        << fixed(algbw_gbps(c), 6) << ',' << fixed(busbw_gbps(c), 6) << '\n';
  }
  write_file_atomically(path, out.str());
}

void write_link_stats(const std::string& path, const SimulationResult& r) {
  std::ostringstream out;
  out << "link,src,dst,bandwidth_gbps,bytes,busy_ns,utilization,busy_fraction,peak_flows\n";
  for (std::size_t i = 0; i < r.links.size(); ++i) {
    const LinkRecord& l = r.links[i];
    out << i << ',' << node_label(l.from, r.npu_count) << ',' << node_label(l.to, r.npu_count) << ','
        << fixed(static_cast<double>(l.bandwidth) / 1e9, 6) << ',' << l.usage.bytes << ',';
    if (r.link_time_known) {
      out << format_ns(l.usage.busy) << ',' << fixed(link_utilization(l, r.makespan), 6) << ','
          << fixed(busy_fraction(l, r.makespan), 6) << ',' << l.usage.peak_flows << '\n';
    } else {  // bytes only: busy time and peak flows unknown
      out << ',' << fixed(link_utilization(l, r.makespan), 6) << ",,\n";
    }
  }
  write_file_atomically(path, out.str());
}

void write_timeline(const std::string& path, const SimulationResult& r) {
  using nlohmann::json;
  static const char* const kLanes[] = {"GPU compute", "CPU", "memory", "communication", "instant"};
  json events = json::array();
  for (std::uint32_t rank = 0; rank < r.ranks.size(); ++rank) {
    events.push_back({{"ph", "M"}, {"name", "process_name"}, {"pid", rank}, {"args", {{"name", "rank " + std::to_string(rank)}}}});
    for (int lane = 0; lane < 5; ++lane) {
      events.push_back({{"ph", "M"}, {"name", "thread_name"}, {"pid", rank}, {"tid", lane}, {"args", {{"name", kLanes[lane]}}}});
    }
  }
  for (const TimelineSlice& t : r.timeline) {
    // Trace-event times are microseconds; ours are exact picoseconds.
    events.push_back({{"ph", "X"},
                      {"name", t.name.empty() ? std::string(node_kind_name(t.kind)) : t.name},
                      {"cat", node_kind_name(t.kind)},
                      {"pid", t.rank},
                      {"tid", t.lane},
                      {"ts", to_us(t.start)},
                      {"dur", to_us(t.end - t.start)},
                      {"args", {{"node_id", t.node_id}, {"start_ns", to_ns(t.start)}, {"end_ns", to_ns(t.end)}}}});
  }
  json doc = {{"displayTimeUnit", "ns"}, {"traceEvents", std::move(events)}};
  write_file_atomically(path, doc.dump() + "\n");
}

}  // namespace sim
