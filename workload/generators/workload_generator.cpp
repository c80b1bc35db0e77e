#include "workload/generators/workload_generator.h"

#include <filesystem>
#include <limits>
#include <stdexcept>

#include "core/error.h"
#include "core/units.h"
#include "workload/rank_set_writer.h"

namespace sim {
namespace {

EtTrace empty_trace(const std::string& path) {
  EtTrace t;
  t.path = path;
  t.metadata.set_version("0.0.4");  // write_et refuses an empty frame 0
  return t;
}

// Appends a node with the next id, depending on `dep` (0: none). The reference
// is valid until the next append.
et::Node& append(EtTrace& t, et::NodeType type, std::string name, std::uint64_t dep) {
  et::Node& n = t.nodes.emplace_back();
  n.set_id(t.nodes.size());
  n.set_name(std::move(name));
  n.set_type(type);
  set_attr_bool(n, "is_cpu_op", false);
  if (dep) n.add_data_deps(dep);
  return n;
}

// "allreduce.3" (appending, not "." + to_string: GCC 12 warns falsely about the latter).
std::string numbered(std::string base, std::uint64_t i) {
  base += '.';
  base += std::to_string(i);
  return base;
}

std::string lower_name(CollectiveType type) {
  std::string s;
  for (const char c : std::string(collective_name(type))) {
    if (c != '_') s += static_cast<char>(c - 'A' + 'a');
  }
  return s;
}

std::uint64_t parse_bytes_option(const std::string& option, const std::string& text) {
  std::uint64_t bytes = 0;
  try {
    bytes = parse_size(text);
  } catch (const std::invalid_argument& e) {
    throw InputError(option + ": " + e.what());
  }
  // comm_size is stored as an int64 attribute; 0 B collectives would only test the latency path by accident.
  if (bytes == 0) throw InputError(option + ": must be at least 1 byte, got '" + text + "'");
  if (bytes > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
    throw InputError(option + ": '" + text + "' is too large");
  }
  return bytes;
}

// Chakra stores compute durations in whole microseconds; refuse what would be rounded.
std::uint64_t parse_micros_option(const std::string& option, const std::string& text) {
  Time t = 0;
  try {
    t = parse_time(text);
  } catch (const std::invalid_argument& e) {
    throw InputError(option + ": " + e.what());
  }
  if (t < 0 || t % kMicrosecond != 0) {
    throw InputError(option + ": '" + text + "' is not a whole number of microseconds (Chakra's duration_micros)");
  }
  return static_cast<std::uint64_t>(t / kMicrosecond);
}

std::vector<CollectiveType> parse_collective_list(const std::string& text) {
  std::vector<CollectiveType> out;
  std::size_t start = 0;
  for (;;) {
    const std::size_t comma = text.find(',', start);
    const std::string item = text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    CollectiveType type;
    if (!parse_collective_name(item, type)) {
      throw InputError("--coll: unknown collective '" + item +
                       "' (allreduce, allgather, reducescatter, alltoall, broadcast, reduce, gather, scatter, barrier)");
    }
    out.push_back(type);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

// Returns RankSetWriter::removed_note().
template <typename Spec, typename Build>
std::string write_ranks(const Spec& spec, const std::string& prefix, Build build) {
  RankSetWriter writer(prefix, spec.npus);
  for (std::uint32_t r = 0; r < spec.npus; ++r) writer.write(r, build(spec, r, writer.path(r)));
  writer.commit();
  return writer.removed_note();
}

template <typename Spec>
std::vector<EtTrace> all_ranks(const Spec& spec, EtTrace (*build)(const Spec&, std::uint32_t, const std::string&)) {
  std::vector<EtTrace> traces;
  traces.reserve(spec.npus);
  for (std::uint32_t r = 0; r < spec.npus; ++r) traces.push_back(build(spec, r, ""));
  return traces;
}

}  // namespace

EtTrace collectives_trace(const CollectivesSpec& spec, std::uint32_t, const std::string& path) {
  EtTrace t = empty_trace(path);
  t.nodes.reserve(spec.collectives.size() * (spec.compute_micros ? 2 : 1));
  std::uint64_t prev = 0;
  for (std::size_t i = 0; i < spec.collectives.size(); ++i) {
    if (spec.compute_micros) {
      et::Node& c = append(t, et::COMP_NODE, numbered("compute", i), prev);
      c.set_duration_micros(spec.compute_micros);
      prev = c.id();
    }
    et::Node& n = append(t, et::COMM_COLL_NODE, numbered(lower_name(spec.collectives[i]), i), prev);
    set_attr_int(n, "comm_type", static_cast<std::int64_t>(spec.collectives[i]));
    set_attr_int(n, "comm_size", static_cast<std::int64_t>(spec.bytes));
    prev = n.id();
  }
  return t;
}

EtTrace chain_trace(const ChainSpec& spec, std::uint32_t, const std::string& path) {
  EtTrace t = empty_trace(path);
  t.nodes.reserve(spec.nodes);
  std::uint64_t prev = 0;
  for (std::uint32_t i = 0; i < spec.nodes; ++i) {
    et::Node& n = append(t, et::COMP_NODE, numbered("compute", i), prev);
    n.set_duration_micros(spec.duration_micros);
    prev = n.id();
  }
  return t;
}

EtTrace p2p_ring_trace(const P2PRingSpec& spec, std::uint32_t rank, const std::string& path) {
  EtTrace t = empty_trace(path);
  t.nodes.reserve(2 * static_cast<std::size_t>(spec.iterations));
  const auto next = static_cast<std::int64_t>((rank + 1) % spec.npus);
  const auto prev_rank = static_cast<std::int64_t>((rank + spec.npus - 1) % spec.npus);
  std::uint64_t last_recv = 0;
  for (std::uint32_t k = 0; k < spec.iterations; ++k) {
    // The round number is the tag, so round k's send can only match round k's recv.
    et::Node& s = append(t, et::COMM_SEND_NODE, numbered("send", k), last_recv);
    set_attr_int(s, "comm_src", rank);
    set_attr_int(s, "comm_dst", next);
    set_attr_int(s, "comm_tag", k);
    set_attr_int(s, "comm_size", static_cast<std::int64_t>(spec.bytes));
    et::Node& r = append(t, et::COMM_RECV_NODE, numbered("recv", k), last_recv);
    set_attr_int(r, "comm_src", prev_rank);
    set_attr_int(r, "comm_dst", rank);
    set_attr_int(r, "comm_tag", k);
    set_attr_int(r, "comm_size", static_cast<std::int64_t>(spec.bytes));
    last_recv = r.id();
  }
  return t;
}

std::vector<EtTrace> collectives_workload(const CollectivesSpec& spec) { return all_ranks(spec, &collectives_trace); }
std::vector<EtTrace> chain_workload(const ChainSpec& spec) { return all_ranks(spec, &chain_trace); }
std::vector<EtTrace> p2p_ring_workload(const P2PRingSpec& spec) { return all_ranks(spec, &p2p_ring_trace); }

int generate_workload(const WorkloadGenOptions& o, std::ostream& out) {
  if (o.npus == 0) throw InputError("--npus: must be at least 1");
  prepare_rank_prefix(o.prefix);
  std::string what, removed;
  if (o.kind == "collectives") {
    CollectivesSpec spec{o.npus, parse_collective_list(o.collectives), parse_bytes_option("--size", o.size_text),
                         o.compute_text.empty() ? 0 : parse_micros_option("--compute", o.compute_text)};
    removed = write_ranks(spec, o.prefix, &collectives_trace);
    what = std::to_string(spec.collectives.size()) + " collective(s) of " + format_bytes(spec.bytes) + " per rank";
  } else if (o.kind == "chain") {
    ChainSpec spec{o.npus, o.nodes, parse_micros_option("--duration", o.duration_text)};
    removed = write_ranks(spec, o.prefix, &chain_trace);
    what = std::to_string(spec.nodes) + " dependent compute nodes of " + std::to_string(spec.duration_micros) +
           " us per rank";
  } else if (o.kind == "p2p-ring") {
    // With one rank the "ring" would be a rank sending to itself.
    if (o.npus < 2) throw InputError("p2p-ring: --npus must be at least 2");
    P2PRingSpec spec{o.npus, parse_bytes_option("--size", o.size_text), o.iterations};
    removed = write_ranks(spec, o.prefix, &p2p_ring_trace);
    what = std::to_string(spec.iterations) + " round(s) of " + format_bytes(spec.bytes) + " to the next rank";
  } else {
    throw InputError("workload gen: unknown kind '" + o.kind + "' (collectives, chain, p2p-ring)");
  }
  out << "wrote " << o.prefix << ".{0.." << o.npus - 1 << "}.et: " << o.kind << ", " << what << removed << "\n";
  return kExitOk;
}

}  // namespace sim
