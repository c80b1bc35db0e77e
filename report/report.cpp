#include "report/report.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <set>

#include "core/error.h"
#include "core/units.h"
#include "report/json_stream.h"

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
  // A barrier moves no buffer (its messages are 1 byte whatever comm_size
  // says): a bandwidth of its comm_size would be made up (1 MiB "in" 1 us).
  if (c.type == CollectiveType::kBarrier) return 0;
  const double s = static_cast<double>(c.bytes);
  return c.type == CollectiveType::kAllGather ? s * c.group_size : s;
}

std::string fixed(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

// Links that carried traffic (how many), and the `shown` hottest (highest
// utilisation) first, ties by link id. Only those are sorted: a 16x16x16
// torus has 24,576 links, and sorting them all was 4% of a 4,096-rank run.
std::vector<std::size_t> hottest_links(const SimulationResult& r, std::size_t shown, std::size_t& carried) {
  std::vector<std::pair<double, std::size_t>> used;  // (utilisation, link id)
  for (std::size_t i = 0; i < r.links.size(); ++i) {
    if (r.links[i].usage.bytes > 0) used.emplace_back(link_utilization(r.links[i], r.makespan), i);
  }
  carried = used.size();
  const auto end = used.begin() + static_cast<std::ptrdiff_t>(std::min(shown, used.size()));
  std::partial_sort(used.begin(), end, used.end(), [](const auto& a, const auto& b) {
    return a.first != b.first ? a.first > b.first : a.second < b.second;
  });
  std::vector<std::size_t> ids;
  for (auto it = used.begin(); it != end; ++it) ids.push_back(it->second);
  return ids;
}

double busy_fraction(const LinkRecord& l, Time makespan) {
  return makespan > 0 ? static_cast<double>(l.usage.busy) / static_cast<double>(makespan) : 0;
}

// What one simulated rank stood for: "128 identical replicas", or with
// context-parallel ranks folded as copies "128 copies of each rank (8
// data-parallel replicas x 16 context-parallel ranks)".
std::string copies_text(const SimulationResult& r) {
  if (r.context_ring <= 1) return std::to_string(r.folded_replicas) + " identical replicas";
  return std::to_string(r.folded_replicas) + " copies of each rank (" +
         std::to_string(r.folded_replicas / r.context_ring) + " data-parallel replicas x " +
         std::to_string(r.context_ring) + " context-parallel ranks)";
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

// The kind of a group, for the summary: a generated workload's groups of one
// role (pg_name 'tp:0', 'tp:1', ...) are one kind, 'tp:*'; any other label is
// its own.
std::string group_kind(const std::string& label) {
  const std::string head = "pg_name '";
  const std::size_t colon = label.rfind(':');
  if (label.rfind(head, 0) != 0 || label.back() != '\'' || colon == std::string::npos || colon <= head.size() ||
      colon + 2 >= label.size()) {
    return label;
  }
  for (std::size_t i = colon + 1; i + 1 < label.size(); ++i) {
    if (label[i] < '0' || label[i] > '9') return label;
  }
  return label.substr(0, colon + 1) + "*'";
}
}  // namespace

void print_summary(std::ostream& out, const SimulationResult& r, const RunInfo& info) {
  // Folded replicas: the job's ranks, then how many of them the run simulated.
  const std::uint64_t job_ranks = static_cast<std::uint64_t>(r.ranks.size()) * std::max<std::uint32_t>(r.folded_replicas, 1);
  out << "workload:  " << info.workload << " (" << job_ranks << " ranks";
  if (job_ranks != r.ranks.size()) out << ", " << r.ranks.size() << " simulated";
  out << ")\n";
  out << "network:   " << info.topology << ", backend " << info.backend << "\n";
  out << "simulated time: " << format_time(r.makespan) << " (" << format_ns(r.makespan) << " ns)\n";
  for (const JobResult& job : r.jobs) {
    out << "  job " << job.name << " (" << job.ranks << " ranks";
    if (job.service_level != 0) out << ", service level " << unsigned{job.service_level};
    out << "): " << format_time(job.makespan) << " (" << format_ns(job.makespan) << " ns)\n";
  }
  if (info.training) print_training_summary(out, *info.training);
  if (!r.ranks.empty()) {
    Time compute = 0, gpu = 0, cpu = 0, exposed = 0, idle = 0;
    for (const RankStats& s : r.ranks) {
      compute = std::max(compute, s.compute);
      gpu = std::max(gpu, s.gpu_busy);
      cpu = std::max(cpu, s.cpu_busy);
      exposed = std::max(exposed, s.exposed_comm);
      idle = std::max(idle, s.idle);
    }
    out << "per rank (max): compute " << format_time(compute);
    // Traces with host operators (PyTorch imports): what the GPU and the CPU each did.
    if (cpu > 0) out << " (GPU busy " << format_time(gpu) << ", CPU busy " << format_time(cpu) << ")";
    out << ", exposed communication " << format_time(exposed) << ", idle " << format_time(idle) << "\n";
  }
  // One line per (type, bytes, group kind, dims, algorithm): count and the slowest instance.
  struct Kind {
    std::size_t calls = 0;
    const CollectiveRecord* slowest = nullptr;
    std::set<std::uint32_t> groups;
  };
  std::map<std::tuple<int, std::uint64_t, std::uint32_t, std::string, std::string, std::string>, Kind> kinds;
  for (const CollectiveRecord& c : r.collectives) {
    const GroupRecord& group = group_of(r, c);
    Kind& k = kinds[{static_cast<int>(c.type), c.bytes, c.group_size, c.algorithm, group_kind(group.label),
                     dims_text(group.dims)}];
    ++k.calls;
    k.groups.insert(c.group);
    if (!k.slowest || c.duration > k.slowest->duration) k.slowest = &c;
  }
  if (!kinds.empty()) out << "collectives (slowest rank of each kind):\n";
  for (const auto& [key, k] : kinds) {
    const CollectiveRecord& c = *k.slowest;
    out << "  " << collective_name(c.type) << " " << format_bytes(c.bytes) << " on " << c.group_size << " ranks";
    const GroupRecord& group = group_of(r, c);
    if (k.groups.size() > 1) {
      out << " (" << std::get<4>(key) << ", " << k.groups.size() << " groups, dims " << dims_text(group.dims) << ")";
    } else if (!group.label.empty() && group.label != "all ranks") {
      out << " (" << group.label << ", dims " << dims_text(group.dims) << ")";
    }
    out << " [" << c.algorithm << "] x" << k.calls << ": " << format_time(c.duration) << ", algbw " << fixed(algbw_gbps(c), 2)
        << " GB/s, busbw " << fixed(busbw_gbps(c), 2) << " GB/s\n";
  }
  std::size_t carried = 0;
  const std::vector<std::size_t> hot = hottest_links(r, 3, carried);
  if (!hot.empty()) {
    out << "hottest links (" << carried << " of " << r.links.size() << " carried traffic"
        << (r.link_time_known ? "" : "; this backend measures bytes only") << "):\n";
    for (std::size_t k = 0; k < hot.size(); ++k) {
      const LinkRecord& l = r.links[hot[k]];
      out << "  " << node_label(l.from, r.npu_count) << " -> " << node_label(l.to, r.npu_count) << " ("
          << format_bandwidth(l.bandwidth) << "): " << format_bytes(l.usage.bytes) << ", utilization "
          << fixed(100 * link_utilization(l, r.makespan), 1) << "%";
      if (r.packet_level) {
        out << ", busy " << fixed(100 * busy_fraction(l, r.makespan), 1) << "%, " << l.usage.packets << " packets ("
            << l.usage.wire_bytes << " B on the wire), " << l.usage.drops << " dropped, peak queue "
            << l.usage.peak_queue_bytes << " B";
        if (l.usage.pauses_received + l.usage.pauses_sent + l.usage.ecn_marks + l.usage.cnps > 0) {
          out << ", PFC pauses " << l.usage.pauses_received << " received (paused " << format_time(l.usage.paused)
              << ") and " << l.usage.pauses_sent << " sent, " << l.usage.ecn_marks << " ECN-marked, " << l.usage.cnps
              << " CNPs";
        }
      } else if (r.link_time_known) {
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
  // A mixture of experts' copies whose routes queue past their ports (ReplicaFolding::queues_approximate).
  const std::string exact =
      r.queued_past_port_routes == 0
          ? "exact, --no-aggregation simulates all"
          : "approximate: " + std::to_string(r.queued_past_port_routes) +
                " mirrored routes queue past their port, where simultaneous messages may be served in another "
                "order than with every rank simulated (docs/system.md; --exact-folding or --no-aggregation for the "
                "exact run)";
  if (r.folded_replicas > 1 && r.replica_period > 1) {
    out << "replicas folded: " << r.folded_replicas * r.replica_period << " identical replicas simulated as "
        << r.replica_period << ", replica k standing for every replica k + " << r.replica_period << " j ("
        << r.ranks.size() << " of " << r.ranks.size() * r.folded_replicas << " ranks; " << exact
        << "; per-rank and link figures are those replicas')\n";
  } else if (r.folded_replicas > 1 && r.stand_in_collectives > 0) {
    out << "replicas folded: " << copies_text(r) << " simulated as one ("
        << r.ranks.size() << " of " << r.ranks.size() * r.folded_replicas << " ranks), with stand-ins: "
        << r.stand_in_collectives << " collectives over the copies timed alone (" << r.stand_in_timings
        << " private runs, " << r.stand_in_events << " events; members' ends spread up to "
        << fixed(to_ns(r.stand_in_spread) / 1e3, 3)
        << " us); approximate: "
        << (r.stand_in_port_loads > 0
                ? "of their traffic only a load on each simulated rank's port shares links with the rest and is "
                  "in the link figures"
                : "their traffic shares no link with the rest and is not in the link figures")
        << " (docs/system.md; --exact-folding or --no-aggregation for the exact run)\n";
  } else if (r.folded_replicas > 1) {
    out << "replicas folded: " << copies_text(r) << " simulated as one ("
        << r.ranks.size() << " of " << r.ranks.size() * r.folded_replicas << " ranks; " << exact
        << "; per-rank and link figures are replica 0's)\n";
  }
  if (r.identical_ranks > 0) {
    out << "ranks folded: " << r.identical_ranks << " ranks with identical traces simulated as one (exact, "
        << "figures written for every rank; --no-aggregation simulates all)\n";
  }
  out << "events: " << r.events << ", messages: " << r.messages;
  if (r.aggregated_collectives > 0) {
    out << ", aggregated collectives: " << r.aggregated_collectives << " (" << r.aggregated_events
        << " representative events)";
  }
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

// The JSON report, section by section: a new field is one more field() call
// in the section it belongs to (keys and their order are the documented
// format, docs/reports.md).
namespace {

void json_header(JsonStream& j, const SimulationResult& r, const RunInfo& info) {
  j.key("units").begin_object();
  j.field("time", "ns").field("bandwidth", "GB/s (1e9 B/s)").field("bytes", "B");
  j.end_object();
  j.field("workload", info.workload).field("topology", info.topology).field("backend", info.backend);
  j.field("sim_time_ns", to_ns(r.makespan));
  if (info.training) write_training_json(j, *info.training);
  if (!r.jobs.empty()) {
    j.key("jobs").begin_array();
    for (const JobResult& job : r.jobs) {
      j.begin_object()
          .field("name", job.name)
          .field("sim_time_ns", to_ns(job.makespan))
          .field("first_rank", job.first_rank)
          .field("ranks", job.ranks)
          .field("service_level", unsigned{job.service_level})
          .end_object();
    }
    j.end_array();
  }
  j.field("events", r.events).field("messages", r.messages);
  if (r.folded_replicas > 1) j.field("folded_replicas", r.folded_replicas);
  if (r.folded_replicas > 1 && r.replica_period > 1) j.field("replica_period", r.replica_period);
  if (r.folded_replicas > 1 && r.queued_past_port_routes > 0) j.field("folding_approximate_routes", r.queued_past_port_routes);
  // Context-parallel ranks folded as copies: folded_replicas counts them too.
  if (r.folded_replicas > 1 && r.context_ring > 1) j.field("folded_context_ranks", r.context_ring);
  if (r.stand_in_collectives > 0) {
    j.field("stand_in_collectives", r.stand_in_collectives)
        .field("stand_in_timings", r.stand_in_timings)
        .field("stand_in_spread_ns", to_ns(r.stand_in_spread));
  }
}

void json_ranks(JsonStream& j, const SimulationResult& r) {
  j.key("ranks").begin_array();
  for (std::size_t i = 0; i < r.ranks.size(); ++i) {
    const RankStats& s = r.ranks[i];
    j.begin_object()
        .field("rank", r.rank_numbers.empty() ? i : r.rank_numbers[i])
        .field("finish_ns", to_ns(s.finish))
        .field("compute_ns", to_ns(s.compute))
        .field("gpu_busy_ns", to_ns(s.gpu_busy))
        .field("cpu_busy_ns", to_ns(s.cpu_busy))
        .field("exposed_comm_ns", to_ns(s.exposed_comm))
        .field("comm_ns", to_ns(s.comm))
        .field("memory_ns", to_ns(s.memory))
        .field("idle_ns", to_ns(s.idle))
        .field("nodes", s.nodes)
        .end_object();
  }
  j.end_array();
}

void json_collectives(JsonStream& j, const SimulationResult& r) {
  j.key("collectives").begin_array();
  for (const CollectiveRecord& c : r.collectives) {
    j.begin_object()
        .field("rank", r.rank_numbers.empty() ? c.rank : r.rank_numbers[c.rank])
        .field("node_id", c.node_id)
        .field("type", collective_name(c.type))
        .field("bytes", c.bytes)
        .field("group_size", c.group_size)
        .field("group", group_of(r, c).label);
    j.key("dims").begin_array();
    for (const std::uint32_t d : group_of(r, c).dims) j.value(d);
    j.end_array();
    j.field("hosts", group_of(r, c).hosts)
        .field("npu", c.npu)
        .field("algorithm", c.algorithm)
        .field("start_ns", to_ns(c.start))
        .field("duration_ns", to_ns(c.duration))
        .field("algbw_gbps", algbw_gbps(c))
        .field("busbw_gbps", busbw_gbps(c))
        .end_object();
  }
  j.end_array();
}

// Links that carried traffic (all of them, with zeros, are in --link-stats).
void json_links(JsonStream& j, const SimulationResult& r) {
  j.key("links").begin_array();
  for (std::size_t i = 0; i < r.links.size(); ++i) {
    const LinkRecord& l = r.links[i];
    if (l.usage.bytes == 0) continue;
    j.begin_object()
        .field("link", i)
        .field("src", node_label(l.from, r.npu_count))
        .field("dst", node_label(l.to, r.npu_count))
        .field("bandwidth_gbps", static_cast<double>(l.bandwidth) / 1e9)
        .field("bytes", l.usage.bytes)
        .field("utilization", link_utilization(l, r.makespan));
    if (r.link_time_known) {
      j.field("busy_ns", to_ns(l.usage.busy)).field("busy_fraction", busy_fraction(l, r.makespan));
      if (!r.packet_level) j.field("peak_flows", l.usage.peak_flows);
    }
    if (r.packet_level) {
      j.field("wire_bytes", l.usage.wire_bytes)
          .field("packets", l.usage.packets)
          .field("drops", l.usage.drops)
          .field("peak_queue_bytes", l.usage.peak_queue_bytes)
          .field("pauses_received", l.usage.pauses_received)
          .field("paused_ns", to_ns(l.usage.paused))
          .field("pauses_sent", l.usage.pauses_sent)
          .field("ecn_marks", l.usage.ecn_marks)
          .field("cnps", l.usage.cnps);
    }
    j.end_object();
  }
  j.end_array();
}

void json_tail(JsonStream& j, const SimulationResult& r) {
  j.key("network_counters").begin_object();
  for (const auto& [name, value] : r.network_counters) j.field(name, value);
  j.end_object();
  j.key("warnings").begin_array();
  for (const std::string& w : r.warnings) j.value(w);
  j.end_array();
}

// Opens `path`, lets `write` fill it, and puts it in place.
template <class Write>
void write_to_path(const std::string& path, Write write) {
  OutputFile file(path);
  write(file.stream());
  file.commit();
}

}  // namespace

void write_json_report(std::ostream& out, const SimulationResult& r, const RunInfo& info) {
  JsonStream j(out);
  j.begin_object();
  json_header(j, r, info);
  json_ranks(j, r);
  json_collectives(j, r);
  json_links(j, r);
  json_tail(j, r);
  j.end_object();
  out << '\n';
}

void write_json_report(const std::string& path, const SimulationResult& r, const RunInfo& info) {
  write_to_path(path, [&](std::ostream& out) { write_json_report(out, r, info); });
}

void write_csv_report(std::ostream& out, const SimulationResult& r) {
  out << "rank,node_id,type,bytes,group_size,algorithm,start_ns,duration_ns,algbw_gbps,busbw_gbps\n";
  for (const CollectiveRecord& c : r.collectives) {
    out << (r.rank_numbers.empty() ? c.rank : r.rank_numbers[c.rank]) << ',' << c.node_id << ',' << collective_name(c.type) << ',' << c.bytes << ',' << c.group_size << ','
        << c.algorithm << ',' << format_ns(c.start) << ',' << format_ns(c.duration) << ','
        << fixed(algbw_gbps(c), 6) << ',' << fixed(busbw_gbps(c), 6) << '\n';
  }
}

void write_csv_report(const std::string& path, const SimulationResult& r) {
  write_to_path(path, [&](std::ostream& out) { write_csv_report(out, r); });
}

void write_link_stats(std::ostream& out, const SimulationResult& r) {
  // A packet-level backend adds nine columns; the first nine are the same for every backend.
  out << "link,src,dst,bandwidth_gbps,bytes,busy_ns,utilization,busy_fraction,peak_flows"
      << (r.packet_level ? ",wire_bytes,packets,drops,peak_queue_bytes,pauses_received,paused_ns,pauses_sent,"
                           "ecn_marks,cnps\n"
                         : "\n");
  for (std::size_t i = 0; i < r.links.size(); ++i) {
    const LinkRecord& l = r.links[i];
    out << i << ',' << node_label(l.from, r.npu_count) << ',' << node_label(l.to, r.npu_count) << ','
        << fixed(static_cast<double>(l.bandwidth) / 1e9, 6) << ',' << l.usage.bytes << ',';
    if (r.link_time_known) {
      out << format_ns(l.usage.busy) << ',' << fixed(link_utilization(l, r.makespan), 6) << ','
          << fixed(busy_fraction(l, r.makespan), 6) << ',';
      if (r.packet_level) {  // peak flows unknown; packets, drops and queues known
        out << ',' << l.usage.wire_bytes << ',' << l.usage.packets << ',' << l.usage.drops << ','
            << l.usage.peak_queue_bytes << ',' << l.usage.pauses_received << ',' << format_ns(l.usage.paused) << ','
            << l.usage.pauses_sent << ',' << l.usage.ecn_marks << ',' << l.usage.cnps << '\n';
      } else {
        out << l.usage.peak_flows << '\n';
      }
    } else {  // bytes only: busy time and peak flows unknown
      out << ',' << fixed(link_utilization(l, r.makespan), 6) << ",,\n";
    }
  }
}

void write_link_stats(const std::string& path, const SimulationResult& r) {
  write_to_path(path, [&](std::ostream& out) { write_link_stats(out, r); });
}

}  // namespace sim
