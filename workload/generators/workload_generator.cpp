#include "workload/generators/workload_generator.h"

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <filesystem>
#include <limits>
#include <stdexcept>

#include "core/error.h"
#include "core/units.h"
#include "workload/et/rank_set_writer.h"
#include "workload/loader/memory_budget.h"

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

std::vector<CollectiveType> parse_collective_list(const std::string& option, const std::string& text) {
  std::vector<CollectiveType> out;
  std::size_t start = 0;
  for (;;) {
    const std::size_t comma = text.find(',', start);
    const std::string item = text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    CollectiveType type;
    if (!parse_collective_name(item, type)) {
      throw InputError(option + ": unknown collective '" + item +
                       "' (allreduce, allgather, reducescatter, alltoall, broadcast, reduce, gather, scatter, barrier)");
    }
    out.push_back(type);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

template <typename Spec>
std::vector<EtTrace> all_ranks(const Spec& spec, EtTrace (*build)(const Spec&, std::uint32_t, const std::string&)) {
  std::vector<EtTrace> traces;
  traces.reserve(spec.npus);
  for (std::uint32_t r = 0; r < spec.npus; ++r) traces.push_back(build(spec, r, ""));
  return traces;
}

}  // namespace

bool size_splits_over_ranks(CollectiveType type) {
  return type == CollectiveType::kReduceScatter || type == CollectiveType::kAllToAll;
}

std::uint64_t nccl_tests_bytes(CollectiveType type, std::uint64_t bytes, std::uint32_t npus) {
  if (!size_splits_over_ranks(type) || npus == 0) return bytes;
  return bytes / npus * npus;
}

std::uint64_t collective_bytes(const CollectivesSpec& spec, std::size_t i) {
  return spec.uneven == UnevenSize::kRoundDown ? nccl_tests_bytes(spec.collectives[i], spec.bytes, spec.npus)
                                               : spec.bytes;
}

std::string nearest_split_sizes(std::uint64_t bytes, std::uint32_t npus) {
  const std::uint64_t below = bytes / npus * npus;
  // A size is at most 2^63 - 1 (comm_size is an int64), so the multiple above may not be one.
  const bool above = below + npus <= static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max());
  std::string nearest;
  if (below > 0) nearest = std::to_string(below) + " B";
  if (above) nearest += (nearest.empty() ? "" : " and ") + std::to_string(below + npus) + " B";
  return std::string("the nearest ") + (below > 0 && above ? "sizes that split are " : "size that splits is ") +
         nearest;
}

void check_collective_sizes(const CollectivesSpec& spec, const std::string& option, const std::string& text) {
  for (const CollectiveType type : spec.collectives) {
    if (!size_splits_over_ranks(type) || spec.npus == 0 || spec.bytes % spec.npus == 0) continue;
    const std::uint64_t n = spec.npus;
    const std::uint64_t below = spec.bytes / n * n;
    const std::string exact = std::to_string(spec.bytes);
    const bool plain = text == exact || text == exact + "B" || text == exact + " B";  // "7", "7B": "7 B" once
    const std::string what = option + " " + (plain ? exact + " B" : text + " (" + exact + " B)") + ": " +
                             collective_name(type) + " on " + std::to_string(n) + " ranks needs a multiple of " +
                             std::to_string(n) + " B (NCCL splits its buffer into " + std::to_string(n) +
                             " equal parts of 1-byte elements)";
    if (spec.uneven == UnevenSize::kRoundDown) {
      if (below > 0) continue;
      throw InputError(what + ", and nccl-tests' rounding down leaves 0 B: give at least " + std::to_string(n) + " B");
    }
    throw InputError(what + "; " + nearest_split_sizes(spec.bytes, spec.npus));
  }
}

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
    set_attr_int(n, "comm_size", static_cast<std::int64_t>(collective_bytes(spec, i)));
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

std::uint32_t Microbenchmark::npus() const {
  return std::visit([](const auto& s) { return s.npus; }, spec);
}

bool Microbenchmark::identical_ranks() const { return !std::holds_alternative<P2PRingSpec>(spec); }

std::string Microbenchmark::describe() const {
  if (const auto* c = std::get_if<CollectivesSpec>(&spec)) {
    return std::to_string(c->collectives.size()) + " collective(s) of " + format_bytes(c->bytes) + " per rank";
  }
  if (const auto* c = std::get_if<ChainSpec>(&spec)) {
    return std::to_string(c->nodes) + " dependent compute nodes of " + std::to_string(c->duration_micros) +
           " us per rank";
  }
  const auto& r = std::get<P2PRingSpec>(spec);
  return std::to_string(r.iterations) + " round(s) of " + format_bytes(r.bytes) + " to the next rank";
}

namespace {

// A rank's nodes are built whole, its decoded trace and then its graph, so a
// count whose one rank cannot fit is refused at once with the estimate, not
// after minutes of generating (a lower bound: memory_budget.h's
// bytes per node, one rank held).
void check_microbenchmark_memory(const Microbenchmark& mb, const std::string& count_option) {
  std::uint64_t nodes = 0;
  if (const auto* c = std::get_if<ChainSpec>(&mb.spec)) nodes = c->nodes;
  if (const auto* r = std::get_if<P2PRingSpec>(&mb.spec)) nodes = 2 * std::uint64_t{r->iterations};
  const MemoryAvailable avail = available_memory();
  if (nodes == 0 || avail.bytes == UINT64_MAX) return;
  const std::uint64_t per_node = kTraceBytesPerNode + kGraphBytesPerNode;
  if (nodes * per_node <= avail.bytes) return;
  char need[64], have[64];
  std::snprintf(need, sizeof need, "%.0f MiB", static_cast<double>(nodes * per_node) / (1024.0 * 1024.0));
  std::snprintf(have, sizeof have, "%.0f MiB", static_cast<double>(avail.bytes) / (1024.0 * 1024.0));
  throw InputError(count_option + ": " + std::to_string(nodes) + " nodes a rank at " + std::to_string(per_node) +
                   " B per node (its trace and its graph) need at least " + need + " but only " + have +
                   " is available (" + avail.source + "): give fewer");
}

}  // namespace

Microbenchmark make_microbenchmark(const WorkloadGenOptions& o, gen::OptionSpelling spelling) {
  const bool query = spelling == gen::OptionSpelling::kQuery;
  const auto option = [&](const char* key) { return query ? "gen:" + o.kind + ": " + key : std::string("--") + key; };
  if (o.npus == 0) throw InputError(option("npus") + ": must be at least 1");
  if (o.npus > kMaxMicrobenchmarkNpus) {
    throw InputError(option("npus") + ": at most " + std::to_string(kMaxMicrobenchmarkNpus) + ", got " +
                     std::to_string(o.npus));
  }
  Microbenchmark mb;
  if (o.kind == "collectives") {
    CollectivesSpec c{o.npus, parse_collective_list(option("coll"), o.collectives),
                      parse_bytes_option(option("size"), o.size_text),
                      o.compute_text.empty() ? 0 : parse_micros_option(option("compute"), o.compute_text), o.uneven};
    check_collective_sizes(c, option("size"), o.size_text);
    mb.spec = std::move(c);
  } else if (o.kind == "chain") {
    if (o.nodes == 0) throw InputError(option("nodes") + ": must be at least 1");
    mb.spec = ChainSpec{o.npus, o.nodes, parse_micros_option(option("duration"), o.duration_text)};
  } else if (o.kind == "p2p-ring") {
    // With one rank the "ring" would be a rank sending to itself.
    if (o.npus < 2) throw InputError("p2p-ring: " + option("npus") + " must be at least 2");
    if (o.iterations == 0) throw InputError(option("iterations") + ": must be at least 1");
    mb.spec = P2PRingSpec{o.npus, parse_bytes_option(option("size"), o.size_text), o.iterations};
  } else {
    throw InputError("workload gen: unknown kind '" + o.kind + "' (collectives, chain, p2p-ring)");
  }
  check_microbenchmark_memory(mb, o.kind == "chain" ? option("nodes") : option("iterations"));
  return mb;
}

EtTrace microbenchmark_trace(const Microbenchmark& mb, std::uint32_t rank, const std::string& path) {
  if (const auto* c = std::get_if<CollectivesSpec>(&mb.spec)) return collectives_trace(*c, rank, path);
  if (const auto* c = std::get_if<ChainSpec>(&mb.spec)) return chain_trace(*c, rank, path);
  return p2p_ring_trace(std::get<P2PRingSpec>(mb.spec), rank, path);
}

namespace {

constexpr std::string_view kGenPrefix = "gen:";
constexpr std::string_view kKinds[] = {"collectives", "chain", "p2p-ring"};

// "collectives" for "gen:collectives?..." (the text between the prefix and '?').
std::string_view kind_of(std::string_view workload) {
  if (!workload.starts_with(kGenPrefix)) return {};
  workload.remove_prefix(kGenPrefix.size());
  return workload.substr(0, workload.find('?'));
}

}  // namespace

bool is_microbenchmark_workload(std::string_view workload) {
  const std::string_view kind = kind_of(workload);
  return std::find(std::begin(kKinds), std::end(kKinds), kind) != std::end(kKinds);
}

Microbenchmark parse_microbenchmark_workload(const std::string& workload, UnevenSize uneven) {
  WorkloadGenOptions o;
  o.kind = std::string(kind_of(workload));
  o.uneven = uneven;
  const std::string scheme = "gen:" + o.kind;
  if (!is_microbenchmark_workload(workload)) {
    throw InputError("--workload '" + workload + "': not a microbenchmark (gen:collectives, gen:chain, gen:p2p-ring)");
  }
  // The keys each kind takes: `sim workload gen`'s options without dashes.
  const std::vector<std::string> keys = o.kind == "collectives" ? std::vector<std::string>{"npus", "coll", "size", "compute"}
                                        : o.kind == "chain"     ? std::vector<std::string>{"npus", "nodes", "duration"}
                                                                : std::vector<std::string>{"npus", "size", "iterations"};
  const std::string query = workload.size() > scheme.size() ? workload.substr(scheme.size() + 1) : "";
  std::vector<std::string> seen;
  const auto count = [&](const std::string& key, const std::string& value) {
    std::uint64_t v = 0;
    const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
    if (ec != std::errc() || end != value.data() + value.size() || value.empty() ||
        v > std::numeric_limits<std::uint32_t>::max()) {
      // A number past 32 bits is a whole number too: the message says the range (npus: the one it takes).
      throw InputError(scheme + ": " + key + "=" + value + ": expected a whole number " +
                       (key == "npus" ? "1.." + std::to_string(kMaxMicrobenchmarkNpus)
                                      : "0.." + std::to_string(std::numeric_limits<std::uint32_t>::max())));
    }
    return static_cast<std::uint32_t>(v);
  };
  std::size_t start = 0;
  while (start < query.size()) {
    const std::size_t amp = std::min(query.find('&', start), query.size());
    const std::string item = query.substr(start, amp - start);
    start = amp + 1;
    if (item.empty()) continue;
    const std::size_t eq = item.find('=');
    if (eq == std::string::npos) throw InputError(scheme + ": '" + item + "' needs a value (key=value)");
    const std::string key = item.substr(0, eq);
    const std::string value = item.substr(eq + 1);
    if (std::find(keys.begin(), keys.end(), key) == keys.end()) {
      std::string known;
      for (const std::string& k : keys) known += (known.empty() ? "" : ", ") + k;
      throw InputError(scheme + ": unknown key '" + key + "' (it takes " + known + ")");
    }
    if (std::find(seen.begin(), seen.end(), key) != seen.end()) throw InputError(scheme + ": '" + key + "' given twice");
    seen.push_back(key);
    if (key == "npus") o.npus = count(key, value);
    else if (key == "coll") o.collectives = value;
    else if (key == "size") o.size_text = value;
    else if (key == "compute") o.compute_text = value;
    else if (key == "nodes") o.nodes = count(key, value);
    else if (key == "duration") o.duration_text = value;
    else o.iterations = count(key, value);
  }
  if (std::find(seen.begin(), seen.end(), "npus") == seen.end()) {
    throw InputError(scheme + ": npus=N is required (the number of ranks)");
  }
  return make_microbenchmark(o, gen::OptionSpelling::kQuery);
}

int generate_workload(const WorkloadGenOptions& o, std::ostream& out) {
  const Microbenchmark mb = make_microbenchmark(o);
  prepare_rank_prefix(o.prefix);
  RankSetWriter writer(o.prefix, mb.npus());
  for (std::uint32_t r = 0; r < mb.npus(); ++r) writer.write(r, microbenchmark_trace(mb, r, writer.path(r)));
  writer.commit();
  out << "wrote " << o.prefix << ".{0.." << o.npus - 1 << "}.et: " << o.kind << ", " << mb.describe()
      << writer.removed_note() << "\n";
  return kExitOk;
}

}  // namespace sim
