#include "system/registry/algorithm_registry.h"

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <stdexcept>
#include <unordered_map>

#include "core/error.h"
#include "core/units.h"
#include "system/program/chunked_program.h"
#include "system/collectives/astrasim_tree.h"
#include "system/collectives/direct.h"
#include "system/collectives/halving_doubling.h"
#include "system/collectives/hierarchical.h"
#include "system/collectives/nccl/nccl_algorithm.h"
#include "system/collectives/one_member.h"
#include "system/collectives/ring.h"
#include "system/collectives/tree.h"
#include "system/producers/msccl_import.h"
#include "workload/et/et_io.h"
#include "system/registry/algorithm_source.h"
#include "workload/loader/memory_budget.h"

namespace sim {

namespace {

constexpr CollectiveType kAllTypes[] = {
    CollectiveType::kAllReduce, CollectiveType::kReduce,        CollectiveType::kAllGather,
    CollectiveType::kGather,    CollectiveType::kScatter,       CollectiveType::kBroadcast,
    CollectiveType::kAllToAll,  CollectiveType::kReduceScatter, CollectiveType::kBarrier};

std::uint32_t chunks_param(const AlgorithmParams& p, std::uint32_t fallback) {
  const auto it = p.find("chunks");
  return it == p.end() ? fallback : static_cast<std::uint32_t>(it->second);
}

std::vector<NativeAlgorithm> build_table() {
  using T = CollectiveType;
  std::vector<NativeAlgorithm> t;
  t.push_back({"ring", {T::kAllReduce, T::kReduceScatter, T::kAllGather, T::kAllToAll}, {"chunks"},
               [](T type, std::uint32_t n, std::uint64_t bytes, std::uint32_t chunks, const AlgorithmParams& p) {
                 return std::make_shared<const RingProgram>(type, n, bytes, chunks_param(p, chunks));
               }});
  t.push_back({"direct", std::vector<T>(std::begin(kAllTypes), std::end(kAllTypes)), {"chunks", "window"},
               [](T type, std::uint32_t n, std::uint64_t bytes, std::uint32_t chunks, const AlgorithmParams& p) {
                 const auto w = p.find("window");
                 return std::make_shared<const DirectProgram>(type, n, bytes, chunks_param(p, chunks),
                                                              w == p.end() ? 0 : static_cast<std::uint32_t>(w->second));
               }});
  t.push_back({"halvingDoubling", {T::kAllReduce, T::kReduceScatter, T::kAllGather}, {"chunks", "order"},
               [](T type, std::uint32_t n, std::uint64_t bytes, std::uint32_t chunks, const AlgorithmParams& p) {
                 const auto o = p.find("order");
                 const bool nearest = o != p.end() && o->second == 1;
                 if (nearest && type != T::kAllReduce) {
                   throw InputError(std::string("halvingDoubling:order=nearest implements ALL_REDUCE only, not ")
                                        .append(collective_name(type))
                                        .append(" (its pieces would not be contiguous; use order=farthest)"));
                 }
                 return std::make_shared<const HalvingDoublingProgram>(type, n, bytes, chunks_param(p, chunks), nearest);
               }});
  t.push_back({"doubleBinaryTree", {T::kAllReduce}, {"chunks"},
               [](T type, std::uint32_t n, std::uint64_t bytes, std::uint32_t chunks, const AlgorithmParams& p) {
                 return std::make_shared<const TreeProgram>(type, n, bytes, chunks_param(p, chunks), true);
               }});
  t.push_back({"binaryTree", {T::kAllReduce, T::kReduce, T::kBroadcast}, {"chunks"},
               [](T type, std::uint32_t n, std::uint64_t bytes, std::uint32_t chunks, const AlgorithmParams& p) {
                 return std::make_shared<const TreeProgram>(type, n, bytes, chunks_param(p, chunks), false);
               }});
  t.push_back({"astrasimTree", {T::kAllReduce}, {"chunks"},
               [](T type, std::uint32_t n, std::uint64_t bytes, std::uint32_t chunks, const AlgorithmParams& p) {
                 return std::make_shared<const AstraSimTreeProgram>(type, n, bytes, chunks_param(p, chunks));
               }});
  {
    // NCCL's collectives (system/collectives/nccl/, docs/nccl.md). Without a
    // context (tools, no topology) the group is one node with no switch;
    // inside a hierarchical choice it gets its line's (make_hierarchical_program).
    NativeAlgorithm nccl_algo{"nccl", nccl::supported_types(), nccl::param_names(),
                              [](T type, std::uint32_t n, std::uint64_t bytes, std::uint32_t, const AlgorithmParams& p) {
                                auto members = std::make_shared<std::vector<std::uint32_t>>(n);
                                for (std::uint32_t i = 0; i < n; ++i) (*members)[i] = i;
                                return nccl::make_program(type, bytes, p, *make_algorithm_context(members, nullptr));
                              }};
    nccl_algo.make_in_context = [](T type, std::uint64_t bytes, std::uint32_t, const AlgorithmParams& p,
                                   const AlgorithmContext& ctx) { return nccl::make_program(type, bytes, p, ctx); };
    nccl_algo.value_of = nccl::param_value;
    nccl_algo.check = [](T type, const AlgorithmParams& p) { nccl::check_keys(normalized(type), p); };
    t.push_back(std::move(nccl_algo));
  }
  return t;
}

// Bytes each op a collective holds at once costs at least: a message in the
// network and a posted receive until it ends. Measured as peak RSS over the
// ops ready when the collective starts, 8 ranks on configs/switch8.yml, a
// 1 GiB all-reduce (/usr/bin/time -v, 2026-12-05): direct (21 ops a chunk
// and rank) 306 MiB at 12,500 chunks, 1,137 MiB at 50,000, 2,146 MiB at
// 100,000: 131 B an op; a ring (2 a chunk and rank) unfolded 477 MiB at
// 100,000 chunks, 837 MiB at 200,000: 236 B; a ring whose ranks fold into
// one 203 MiB at 200,000, 369 MiB at 400,000: 54 B. The least, rounded
// down, so that only a collective that clearly cannot fit is refused.
constexpr std::uint64_t kBytesPerHeldOp = 50;

// Refuses (InputError naming `what`, the chunk count, the estimate and the
// memory available) a program whose ops ready at its start on every rank
// cannot fit in available_memory() at kBytesPerHeldOp each.
void check_held_ops(const CollectiveProgram& program, CollectiveType type, std::uint64_t chunks,
                    const std::string& what) {
  const MemoryAvailable avail = available_memory();
  if (avail.bytes == UINT64_MAX) return;
  const std::uint32_t n = program.group_size();
  const std::uint64_t limit = avail.bytes / kBytesPerHeldOp;
  // Every op a rank runs is an upper bound of those it holds at once: no
  // start() to call when even that fits.
  std::uint64_t all = 0;
  for (std::uint32_t pos = 0; pos < n && all <= limit; ++pos) all += program.op_count(pos);
  if (all <= limit) return;
  // Every rank's start, as the run would make them (time linear in them;
  // one rank's ready list held at a time).
  std::uint64_t held = 0;
  std::vector<OpRef> ready;
  for (std::uint32_t pos = 0; pos < n; ++pos) {
    RankCursor cursor;
    ready.clear();
    program.start(pos, cursor, ready);
    held += ready.size();
  }
  if (held <= limit) return;
  char need[64], have[64];
  std::snprintf(need, sizeof need, "%.0f MiB", static_cast<double>(held) * kBytesPerHeldOp / (1024.0 * 1024.0));
  std::snprintf(have, sizeof have, "%.0f MiB", static_cast<double>(avail.bytes) / (1024.0 * 1024.0));
  throw InputError(what + ": " + std::to_string(chunks) + " chunks on " + std::to_string(n) + " ranks hold " +
                   std::to_string(held) + " ops at once when the " +
                   collective_name(type) + " starts (each rank's messages in flight and posted receives), at " +
                   std::to_string(kBytesPerHeldOp) + " B each at least " + need + ", but only " + have +
                   " is available (" + avail.source + "); use fewer chunks");
}

std::string type_list(const NativeAlgorithm& a) {
  std::string s;
  for (CollectiveType t : a.types) s += (s.empty() ? "" : ", ") + std::string(collective_name(t));
  return s;
}

}  // namespace

std::vector<std::uint64_t> dataset_split_sizes(const SystemConfig& config, CollectiveType type,
                                               std::uint32_t group_size, std::uint64_t bytes) {
  const std::uint32_t k = std::max<std::uint32_t>(config.dataset_splits, 1);
  // ASTRA-sim's size-enlargement rule: a chunk smaller than the group is
  // bumped to one byte per NPU (the total grows to k x n), except all-gather.
  std::vector<std::uint64_t> sizes(k);
  if (bytes / k < group_size && normalized(type) != CollectiveType::kAllGather) {
    sizes.assign(k, group_size);
  } else {
    for (std::uint32_t c = 0; c < k; ++c) sizes[c] = part_bytes(bytes, k, c);
  }
  return sizes;
}

std::shared_ptr<const CollectiveProgram> with_dataset_splits(
    const SystemConfig& config, CollectiveType type, std::uint32_t group_size, std::uint64_t bytes,
    const std::function<std::shared_ptr<const CollectiveProgram>(std::uint64_t)>& make, bool& halving_doubling) {
  const bool wrap = config.dataset_splits > 0 || config.endpoint_delay > 0 || config.astrasim_quirks;
  if (!wrap) return make(bytes);
  const std::vector<std::uint64_t> sizes = dataset_split_sizes(config, type, group_size, bytes);
  const auto k = static_cast<std::uint32_t>(sizes.size());
  std::vector<std::shared_ptr<const CollectiveProgram>> chunks(k);
  for (std::uint32_t c = 0; c < k; ++c) chunks[c] = c > 0 && sizes[c] == sizes[c - 1] ? chunks[c - 1] : make(sizes[c]);
  const std::uint32_t free = config.astrasim_quirks && halving_doubling ? 1 : 0;
  const std::uint32_t active = config.active_chunks == 0 ? k : config.active_chunks;
  // ASTRA-sim's all-to-all moves one block (chunk / n) per message.
  std::vector<std::uint64_t> block;
  if (config.astrasim_quirks && normalized(type) == CollectiveType::kAllToAll) {
    for (std::uint32_t c = 0; c < k; ++c) block.push_back(sizes[c] / group_size);
  }
  return std::make_shared<const ChunkedProgram>(std::move(chunks), active, config.endpoint_delay, free,
                                                std::move(block));
}

bool NativeAlgorithm::supports(CollectiveType type) const {
  return std::find(types.begin(), types.end(), normalized(type)) != types.end();
}

const std::vector<NativeAlgorithm>& native_algorithms() {
  static const std::vector<NativeAlgorithm> table = build_table();
  return table;
}

const NativeAlgorithm* find_native_algorithm(const std::string& name) {
  for (const NativeAlgorithm& a : native_algorithms()) {
    if (a.name == name) return &a;
  }
  return nullptr;
}

std::string native_algorithm_names() {
  std::string s;
  for (const NativeAlgorithm& a : native_algorithms()) s += (s.empty() ? "" : ", ") + a.name;
  return s;
}

CollectiveType normalized(CollectiveType type) {
  return type == CollectiveType::kReduceScatterBlock ? CollectiveType::kReduceScatter : type;
}

const char* default_algorithm(CollectiveType type) {
  switch (normalized(type)) {
    case CollectiveType::kReduce:
    case CollectiveType::kBroadcast:
      return "binaryTree";
    case CollectiveType::kGather:
    case CollectiveType::kScatter:
    case CollectiveType::kBarrier:
      return "direct";
    default:
      return "ring";
  }
}

namespace {

constexpr const char* kHierarchical = "hierarchical";

// Top-level items of a choice: `name[:key=value]` starts an entry, a bare
// `key=value` adds to the entry before it.
struct Entry {
  std::string name;
  std::vector<std::string> items;  // key=value
};
std::vector<Entry> split_entries(const std::string& text) {
  std::vector<Entry> out;
  std::size_t at = 0;
  while (at <= text.size()) {
    const std::size_t end = std::min(text.find(',', at), text.size());
    const std::string tok = text.substr(at, end - at);
    const std::size_t colon = tok.find(':');
    const std::string head = tok.substr(0, colon);
    if (head.find('=') != std::string::npos && !out.empty()) {
      out.back().items.push_back(tok);
    } else {
      out.push_back(Entry{head, {}});
      if (colon != std::string::npos) {
        const std::string rest = tok.substr(colon + 1);
        // `hierarchical:ring,...`: the list may start right after the colon.
        if (head == kHierarchical && rest.find('=') == std::string::npos) {
          out.push_back(Entry{rest.substr(0, rest.find(':')), {}});
          if (rest.find(':') != std::string::npos) out.back().items.push_back(rest.substr(rest.find(':') + 1));
        } else {
          out.back().items.push_back(rest);
        }
      }
    }
    at = end + 1;
  }
  return out;
}

AlgorithmParams parse_params(const std::string& text, const std::string& name, const std::vector<std::string>& known_keys,
                             const std::vector<std::string>& items,
                             const std::function<std::uint64_t(const std::string&, const std::string&)>& value_of = {}) {
  AlgorithmParams params;
  std::string known;
  for (const std::string& p : known_keys) known += (known.empty() ? "" : ", ") + p;
  for (const std::string& item : items) {
    const std::size_t eq = item.find('=');
    const std::string key = item.substr(0, eq);
    const bool is_key = std::find(known_keys.begin(), known_keys.end(), key) != known_keys.end();
    if (eq == std::string::npos && is_key) {
      throw InputError("collective algorithm '" + text + "': '" + key + "' has no value: write " + name + ":" + key +
                       "=<value>");
    }
    if (!is_key) {
      throw InputError("collective algorithm '" + text + "': '" + item + "' is not a parameter of " + name +
                       " (write " + name + ":key=value with key one of: " + known + ")");
    }
    const std::string value = item.substr(eq + 1);
    if (params.count(key)) {
      throw InputError("collective algorithm '" + text + "': " + key + " is given twice (each key once)");
    }
    if (value_of) {  // the algorithm reads its own values
      try {
        params[key] = value_of(key, value);
      } catch (const InputError& e) {
        throw InputError("collective algorithm '" + text + "': " + e.what());
      }
      continue;
    }
    if (key == "optimization") {
      if (value != "baseline" && value != "localBWAware") {
        throw InputError("collective algorithm '" + text + "': optimization must be baseline or localBWAware, not '" +
                         value + "'");
      }
      params[key] = value == "baseline" ? 0 : 1;
      continue;
    }
    if (key == "order") {  // halvingDoubling's step order: 0 farthest first (Rabenseifner), 1 nearest (ASTRA-sim)
      if (value != "farthest" && value != "nearest") {
        throw InputError("collective algorithm '" + text + "': order must be farthest or nearest, not '" + value + "'");
      }
      params[key] = value == "farthest" ? 0 : 1;
      continue;
    }
    std::uint64_t v = 0;
    const std::uint64_t lowest = key == "active_chunks" || key == "dimension_queue" ? 0 : 1;
    if (key == "dimension_queue" && value != "0" && value != "1") {
      throw InputError("collective algorithm '" + text + "': dimension_queue must be 0 or 1, not '" + value + "'");
    }
    const auto [p, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
    if (ec != std::errc() || p != value.data() + value.size() || v < lowest || v > (1u << 20)) {
      throw InputError("collective algorithm '" + text + "': " + key + " must be an integer " + std::to_string(lowest) +
                       "..1048576, not '" + value + "'");
    }
    params[key] = v;
  }
  return params;
}

}  // namespace

bool names_native_algorithm(const std::string& text) {
  const std::vector<Entry> entries = split_entries(text);
  return entries.front().name == kHierarchical || find_native_algorithm(entries.front().name) != nullptr;
}

AlgorithmChoice parse_algorithm_choice(const std::string& text, CollectiveType type) {
  AlgorithmChoice choice;
  const std::vector<Entry> entries = split_entries(text);
  const bool hier_head = entries.front().name == kHierarchical;
  if (!hier_head && !find_native_algorithm(entries.front().name) && is_msccl_xml_path(text)) {
    load_msccl_ir(text);  // MSCCL-IR (errors name file and line), imported when the registry loads it
    choice.et_source = text;
    return choice;
  }
  if (!hier_head && !find_native_algorithm(entries.front().name)) {
    // `<prefix>@<size>`: ETs written for a collective of <size>.
    std::string source = text;
    if (const std::size_t at = text.rfind('@'); at != std::string::npos && at + 1 < text.size() &&
                                                text.find('/', at) == std::string::npos) {
      try {
        choice.et_written_size = parse_size(std::string_view(text).substr(at + 1));
      } catch (const std::invalid_argument& e) {  // what parse_size throws (a fuzz finding)
        throw InputError("collective algorithm '" + text + "': the size after '@' (what the ETs were written for): " +
                         e.what());
      }
      if (*choice.et_written_size == 0) throw InputError("collective algorithm '" + text + "': the size after '@' must be > 0");
      source = text.substr(0, at);
    }
    try {
      resolve_rank_files(source);
    } catch (const InputError& e) {
      throw InputError("collective algorithm '" + text + "' for " + collective_name(type) +
                       ": not a native algorithm (" + native_algorithm_names() + ") "
                       "nor Chakra ETs (" + e.what() + ")");
    }
    choice.et_source = source;
    return choice;
  }
  const auto check_native = [&](const Entry& e) -> DimensionChoice {
    if (e.name.empty()) {
      throw InputError("collective algorithm '" + text + "': an empty entry (a comma at the end, or two in a row?); "
                       "a comma list names one algorithm per topology dimension");
    }
    const NativeAlgorithm* a = find_native_algorithm(e.name);
    if (!a) {
      throw InputError("collective algorithm '" + text + "': '" + e.name + "' is not a native algorithm (" +
                       native_algorithm_names() + ")");
    }
    if (!a->supports(type)) {
      throw InputError("collective algorithm '" + a->name + "' does not implement " + collective_name(type) +
                       " (it implements " + type_list(*a) + ")");
    }
    DimensionChoice d{a, parse_params(text, a->name, a->params, e.items, a->value_of)};
    if (a->check) {
      try {
        a->check(type, d.params);
      } catch (const InputError& err) {
        throw InputError("collective algorithm '" + text + "': " + err.what());
      }
    }
    return d;
  };
  if (!hier_head && entries.size() == 1) {
    const DimensionChoice d = check_native(entries.front());
    choice.native = d.native;
    choice.params = d.params;
    return choice;
  }
  choice.hierarchical = true;
  if (!HierarchicalProgram::supports(normalized(type))) {
    throw InputError("collective algorithm '" + text + "': hierarchical collectives implement ALL_REDUCE, "
                     "REDUCE_SCATTER, ALL_GATHER and ALL_TO_ALL, not " + collective_name(type));
  }
  std::size_t first = 0;
  if (hier_head) {
    choice.params = parse_params(text, kHierarchical, {"optimization", "active_chunks", "chunks", "dimension_queue"},
                                 entries.front().items);
    first = 1;
  }
  for (std::size_t i = first; i < entries.size(); ++i) {
    if (entries[i].name == kHierarchical) {
      throw InputError("collective algorithm '" + text + "': 'hierarchical' can only head the list");
    }
    choice.dims.push_back(check_native(entries[i]));
  }
  return choice;
}

std::shared_ptr<const CollectiveProgram> make_hierarchical_program(
    const AlgorithmChoice& choice, CollectiveType type, std::uint64_t bytes, std::uint32_t chunks,
    const std::vector<std::uint32_t>& members, const std::vector<std::uint32_t>& topology_dims, bool baseline,
    std::uint32_t active, bool dimension_queue, bool astrasim_quirks, Time phase_tail,
    const std::vector<TopologyDimension>* costs, const Topology* topology, GpuMemory memory) {
  type = normalized(type);
  const auto n = static_cast<std::uint32_t>(members.size());
  std::vector<std::uint32_t> sizes = topology_dims;
  if (sizes.empty()) {
    std::uint32_t top = 0;
    for (std::uint32_t m : members) top = std::max(top, m);
    sizes.push_back(top + 1);
  }
  const std::vector<DimensionChoice> all =
      choice.dims.empty() ? std::vector<DimensionChoice>{{find_native_algorithm(default_algorithm(type)), {}}}
                          : choice.dims;
  if (all.size() != 1 && all.size() != sizes.size()) {
    throw InputError("hierarchical " + std::string(collective_name(type)) + ": " + std::to_string(all.size()) +
                     " per-dimension algorithms for a topology of " + std::to_string(sizes.size()) +
                     (sizes.size() == 1 ? " dimension" : " dimensions") + " (give one per dimension, or one for all)");
  }
  const auto pick = [&](std::size_t dim) -> const DimensionChoice& { return all.size() == 1 ? all[0] : all[dim]; };
  if (const auto it = choice.params.find("chunks"); it != choice.params.end()) chunks = static_cast<std::uint32_t>(it->second);
  if (const auto it = choice.params.find("optimization"); it != choice.params.end()) baseline = it->second == 0;
  if (const auto it = choice.params.find("active_chunks"); it != choice.params.end()) active = static_cast<std::uint32_t>(it->second);
  if (const auto it = choice.params.find("dimension_queue"); it != choice.params.end()) dimension_queue = it->second != 0;

  // The group's coordinates: per topology dimension, the distinct values its members take.
  std::vector<std::vector<std::uint32_t>> values(sizes.size());
  std::vector<std::vector<std::uint32_t>> coord(sizes.size(), std::vector<std::uint32_t>(n));
  for (std::uint32_t p = 0; p < n; ++p) {
    std::uint64_t rest = members[p];
    for (std::size_t d = 0; d < sizes.size(); ++d) {
      coord[d][p] = static_cast<std::uint32_t>(rest % sizes[d]);
      rest /= sizes[d];
    }
  }
  std::vector<HierarchicalDimension> dims;
  std::vector<const DimensionChoice*> dim_choice;  // per hierarchical dimension
  std::vector<std::uint32_t> grid(n, 0);
  std::uint64_t stride = 1;
  for (std::size_t d = 0; d < sizes.size(); ++d) {
    std::vector<std::uint32_t> v = coord[d];
    std::sort(v.begin(), v.end());
    v.erase(std::unique(v.begin(), v.end()), v.end());
    if (v.size() < 2) continue;
    const DimensionChoice& dc = pick(d);
    HierarchicalDimension hd;
    hd.size = static_cast<std::uint32_t>(v.size());
    hd.name = dc.native->name;
    hd.rs_shift = dc.native->name == "ring" ? 1 : 0;
    if (costs && d < costs->size() && (*costs)[d].bandwidth > 0) {  // the dimension's own link, not the defaults
      hd.latency_ns = static_cast<double>((*costs)[d].latency) / 1e3;
      hd.ns_per_byte = 1e9 / static_cast<double>((*costs)[d].bandwidth);
    }
    const NativeAlgorithm* algo = dc.native;
    const AlgorithmParams params = dc.params;
    hd.supports = [algo](CollectiveType t) { return algo->supports(t); };
    // ASTRA-sim's tree on a dimension (astrasimTree, or doubleBinaryTree from
    // an ASTRA-sim system file): each phase is one whole-chunk tree, the
    // dimension's phases alternating RootMax / RootMin in the order ASTRA-sim
    // creates them, the rank leaving a phase once its last sends are issued
    // (`phase_tail` later); its phase object ignores the phase's type, so a
    // localBWAware all-gather on that dimension is a second all-reduce.
    const bool astrasim_tree = algo->name == "astrasimTree" || (astrasim_quirks && algo->name == "doubleBinaryTree");
    if (astrasim_tree) {
      hd.name = "astrasimTree";
      hd.variants = 2;
      hd.gather_by_allreduce = true;
    }
    // One inner chunk unless the dimension's chunks= says otherwise: chunks pipeline across dimensions.
    hd.make = [algo, params, astrasim_quirks, phase_tail, astrasim_tree](
                  CollectiveType t, std::uint32_t size, std::uint64_t b,
                  std::uint32_t variant) -> std::shared_ptr<const CollectiveProgram> {
      if (astrasim_tree && algo->supports(t)) {
        return std::make_shared<const AstraSimTreeProgram>(t, size, std::vector<std::uint64_t>{b}, phase_tail, 1,
                                                           variant == 1);
      }
      auto prog = make_native_program(*algo, params, t, size, b, 1);
      // ASTRA-sim's quirks per phase: all-to-all moves one block of b / size
      // per message; halvingDoubling's first reduction of a phase is free;
      // each phase ends with an endpoint delay.
      if (astrasim_quirks) {
        const bool a2a = t == CollectiveType::kAllToAll;
        return std::make_shared<const ChunkedProgram>(
            std::vector<std::shared_ptr<const CollectiveProgram>>{prog}, 1, phase_tail,
            algo->name == "halvingDoubling" ? 1 : 0, a2a ? std::vector<std::uint64_t>{b / size} : std::vector<std::uint64_t>{});
      }
      return prog;
    };
    for (std::uint32_t p = 0; p < n; ++p) {
      const auto local = static_cast<std::uint64_t>(std::lower_bound(v.begin(), v.end(), coord[d][p]) - v.begin());
      grid[p] += static_cast<std::uint32_t>(local * stride);
    }
    stride *= v.size();
    dims.push_back(std::move(hd));
    dim_choice.push_back(&dc);
  }
  bool is_grid = stride == n;
  if (is_grid) {
    std::vector<char> seen(n, 0);
    for (std::uint32_t g : grid) {
      if (seen[g]) is_grid = false;
      seen[g] = 1;
    }
  }
  if (!is_grid) {
    // Not a grid of the topology's dimensions: the first algorithm, flat over the group.
    const NativeAlgorithm& first = *all.front().native;
    if (first.make_in_context && topology && first.supports(type)) {
      return first.make_in_context(type, bytes, chunks, all.front().params,
                                   *make_algorithm_context(std::make_shared<const std::vector<std::uint32_t>>(members),
                                                           topology, memory));
    }
    return make_native_program(first, all.front().params, type, n, bytes, chunks);
  }
  // Topology-aware algorithms on a dimension: built in the context of the
  // line through grid index 0 (its members by line position, the topology,
  // the capabilities it does not share with other lines), run on every line
  // with that line's switches (the lines of a grid on a dimension stack are
  // translations of each other; switch_translation refuses them otherwise).
  std::vector<std::uint32_t> pos_of_grid(n);
  for (std::uint32_t p = 0; p < n; ++p) pos_of_grid[grid[p]] = p;
  std::vector<std::vector<NodeId>> switches_of;
  std::uint32_t line_stride = 1;
  for (std::size_t k = 0; k < dims.size(); ++k) {
    HierarchicalDimension& hd = dims[k];
    const std::uint32_t s = line_stride;
    line_stride *= hd.size;
    const NativeAlgorithm* algo = dim_choice[k]->native;
    if (!algo->make_in_context || !topology) continue;
    const auto line_of = [&](std::uint32_t base) {
      std::vector<std::uint32_t> line(hd.size);
      for (std::uint32_t j = 0; j < hd.size; ++j) line[j] = members[pos_of_grid[base + j * s]];
      return line;
    };
    const auto reference = std::make_shared<const std::vector<std::uint32_t>>(line_of(0));
    const std::shared_ptr<const AlgorithmContext> ctx = make_line_context(reference, members, topology, memory);
    if (switches_of.empty()) switches_of = switches_of_npus(*topology);
    auto translations = std::make_shared<std::unordered_map<std::uint32_t, std::unordered_map<NodeId, NodeId>>>();
    for (std::uint32_t g = 0; g < n; ++g) {
      if (g / s % hd.size != 0 || g == 0) continue;  // one per line: its coordinate-0 rank
      translations->emplace(g, switch_translation(switches_of, *reference, line_of(g)));
    }
    const std::string what = hd.name;
    hd.switch_of_line = [translations, what](std::uint32_t base, std::uint32_t node) -> std::uint32_t {
      if (base == 0) return node;
      const auto& to = translations->at(base);
      const auto it = to.find(node);
      if (it == to.end()) {
        throw std::logic_error("hierarchical: '" + what + "' addresses switch " + std::to_string(node) +
                               ", which its line's NPUs do not hang off");
      }
      return it->second;
    };
    const AlgorithmParams params = dim_choice[k]->params;
    const bool quirks = astrasim_quirks;
    hd.make = [algo, params, ctx, quirks, phase_tail](CollectiveType t, std::uint32_t, std::uint64_t b,
                                                      std::uint32_t) -> std::shared_ptr<const CollectiveProgram> {
      if (!algo->supports(t)) return make_native_program(*algo, params, t, ctx->size(), b, 1);  // the error
      auto prog = algo->make_in_context(t, b, 1, params, *ctx);
      if (quirks) {
        return std::make_shared<const ChunkedProgram>(std::vector<std::shared_ptr<const CollectiveProgram>>{prog}, 1,
                                                      phase_tail, 0, std::vector<std::uint64_t>{});
      }
      return prog;
    };
  }
  return std::make_shared<const HierarchicalProgram>(
      type, bytes, chunks, active, baseline ? HierarchicalOptimization::kBaseline : HierarchicalOptimization::kLocalBWAware,
      std::move(dims), std::move(grid), dimension_queue);
}

std::shared_ptr<const CollectiveProgram> make_native_program(const NativeAlgorithm& algo, const AlgorithmParams& params,
                                                             CollectiveType type, std::uint32_t group_size,
                                                             std::uint64_t bytes, std::uint32_t chunks) {
  if (!algo.supports(type)) {
    throw InputError("collective algorithm '" + algo.name + "' does not implement " + collective_name(type) +
                     " (it implements " + type_list(algo) + ")");
  }
  return algo.make(normalized(type), group_size, bytes, chunks, params);
}

namespace {

// Bytes the ranks of a collective of `bytes` must send in all, whatever the
// algorithm (no in-network reduction): every rank needs every other rank's
// contribution. 0 where no simple bound is checked.
std::uint64_t least_total_sent(CollectiveType type, std::uint32_t n, std::uint64_t bytes) {
  const uint128 m = n > 0 ? n - 1 : 0, s = bytes;
  uint128 need = 0;
  switch (normalized(type)) {
    case CollectiveType::kAllReduce: need = 2 * m * s; break;  // N x 2(N-1)/N x S
    case CollectiveType::kAllGather: need = uint128{n} * m * s; break;  // each receives (N-1) inputs of S
    case CollectiveType::kReduceScatter:
    case CollectiveType::kAllToAll: need = m * s; break;  // N x (N-1)/N x S
    case CollectiveType::kBroadcast:
    case CollectiveType::kReduce: need = m * s; break;  // each non-root receives (sends) S
    default: return 0;
  }
  // Saturated: no trace can send more than 2^64 - 1 bytes in all anyway.
  return need > ~std::uint64_t{0} ? ~std::uint64_t{0} : static_cast<std::uint64_t>(need);
}

}  // namespace

void check_injected_fits(const EtAlgorithm& algo, CollectiveType type, std::uint64_t bytes) {
  if (algo.written_size) return;  // scaled by S / written size
  std::uint64_t sent = 0;
  for (const EtRankProgram& r : algo.ranks) {
    for (const EtOpSpec& op : r.ops) {
      if (op.kind != OpKind::kSend) continue;
      if (op.chunk_cnt >= 0 && op.total_chunks > 0) return;  // sized by its chunk attributes
      sent += op.bytes;
    }
  }
  const auto n = static_cast<std::uint32_t>(algo.ranks.size());
  const std::uint64_t need = least_total_sent(type, n, bytes);
  if (sent >= need) return;
  throw InputError("collective algorithm '" + algo.source + "' records no size it was written for and its messages " +
                   "total " + std::to_string(sent) + " B, less than any " + collective_name(type) + " of " +
                   std::to_string(bytes) + " B on " + std::to_string(n) + " ranks must send (" + std::to_string(need) +
                   " B): it was written for a smaller collective. Say which: --collective " +
                   "<type>=" + algo.source + "@<size> (e.g. @1MiB; messages then scale by " + std::to_string(bytes) +
                   " B / size), or record collective_size in its GlobalMetadata");
}

AlgorithmRegistry::AlgorithmRegistry(const SystemConfig& config, std::vector<std::uint32_t> topology_dims,
                                     EtLoader load, bool stacked_dimensions)
    : config_(config), topology_dims_(std::move(topology_dims)), load_(std::move(load)),
      stacked_dimensions_(stacked_dimensions) {
  for (const auto& [type, text] : config.algorithms) chosen_[type] = choose(text, type);
  if (!config.point_to_point.empty() && config.point_to_point != "network") {
    // NCCL's send and receive take the keys of its all-to-all, which is made of them.
    const std::string where = config.point_to_point_where.empty() ? "collective.algorithms.send_recv"
                                                                  : config.point_to_point_where;
    AlgorithmChoice choice;
    try {
      choice = parse_algorithm_choice(config.point_to_point, CollectiveType::kAllToAll);
      if (!choice.native || choice.native->name != "nccl") {
        throw InputError("'" + config.point_to_point + "' is not NCCL's: only nccl (with its point-to-point keys: "
                         "overhead, proxy, net_latency, p2p_net_chunk, net_write_cost, net_rails, min_stripe, "
                         "channels, arch, version) runs a send and its receive; 'network' (or no key) runs each as "
                         "one message on the network (docs/nccl.md)");
      }
      nccl::p2p_model(choice.params);
    } catch (const InputError& e) {
      // Its keys are checked as all-to-all's, whose sends they are: the message names send_recv.
      std::string what = e.what();
      for (std::size_t at = 0; (at = what.find("does not apply to ALL_TO_ALL", at)) != std::string::npos;) {
        what.replace(at, 28, "does not apply to send_recv (NCCL's sends, as its ALL_TO_ALL's)");
        at += 28;
      }
      throw InputError(where + ": " + what);
    }
    point_to_point_ = choice.params;
  }
}

const AlgorithmRegistry::PointToPoint* AlgorithmRegistry::point_to_point(std::uint32_t src, std::uint32_t dst) {
  if (!point_to_point_ || src == dst) return nullptr;  // a rank's message to itself stays one message
  auto [it, fresh] = pairs_.try_emplace({src, dst});
  if (fresh) {
    const auto ctx = make_algorithm_context(std::make_shared<const std::vector<std::uint32_t>>(
                                                std::vector<std::uint32_t>{src, dst}),
                                            topology_, gpu_memory());
    it->second.across = ctx->domain_of[0] != ctx->domain_of[1];
    it->second.model = nccl::p2p_model(*point_to_point_, *ctx);
  }
  return &it->second;
}

bool AlgorithmRegistry::default_is_hierarchical(const CollectiveRequest& req) const {
  if (!stacked_dimensions_ || topology_dims_.size() < 2 || !HierarchicalProgram::supports(normalized(req.type))) {
    return false;
  }
  // The dimensions along which the group's NPUs (mixed-radix addresses, dimension 0 fastest) differ.
  std::uint32_t spanned = 0;
  std::uint64_t stride = 1;
  for (const std::uint32_t size : topology_dims_) {
    const std::uint64_t first = (*req.members)[0] / stride % size;
    for (const std::uint32_t m : *req.members) {
      if (m / stride % size != first) {
        ++spanned;
        break;
      }
    }
    stride *= size;
  }
  return spanned >= 2;
}

std::pair<const AlgorithmRegistry::Chosen*, std::uint32_t> AlgorithmRegistry::chosen_for(const CollectiveRequest& req) {
  if (req.node_id && !config_.per_node_algorithms.empty()) {
    if (const auto text = config_.per_node_algorithms.find(*req.node_id); text != config_.per_node_algorithms.end()) {
      // Parsed on first use: the node's collective type is known only now.
      auto [it, fresh] = per_node_.try_emplace({*req.node_id, req.type});
      if (fresh) {
        try {
          it->second.chosen = choose(text->second, req.type);
        } catch (const InputError& e) {
          per_node_.erase(it);
          throw InputError("per-node algorithm for node " + std::to_string(*req.node_id) + " (" +
                           collective_name(req.type) + "): " + e.what());
        }
        it->second.id = static_cast<std::uint32_t>(per_node_.size());
      }
      return {&it->second.chosen, it->second.id};
    }
  }
  const auto by_type = chosen_.find(req.type);
  return {by_type == chosen_.end() ? nullptr : &by_type->second, 0};
}

std::string AlgorithmRegistry::chosen_where(const CollectiveRequest& req, std::uint32_t choice_id) const {
  const auto described = [](const auto& where, const auto& text, const auto& key) {
    const auto w = where.find(key);
    const auto t = text.find(key);
    if (w == where.end() || t == text.end()) return std::string();
    return w->second + ": collective algorithm '" + t->second + "'";
  };
  if (choice_id > 0 && req.node_id) return described(config_.per_node_where, config_.per_node_algorithms, *req.node_id);
  return described(config_.algorithm_where, config_.algorithms, req.type);
}

AlgorithmRegistry::Chosen AlgorithmRegistry::choose(const std::string& text, CollectiveType type) const {
  Chosen c;
  c.choice = parse_algorithm_choice(text, type);
  if (!c.choice.native && !c.choice.hierarchical) {
    std::shared_ptr<const EtAlgorithm> algo = load_ ? load_(c.choice.et_source, type)
                                                    : std::make_shared<const EtAlgorithm>(
                                                          load_et_algorithm(c.choice.et_source, type));
    if (c.choice.et_written_size && algo->written_size != c.choice.et_written_size) {
      // `prefix@1MiB`: this choice's size, on a copy (a sweep shares the loaded one).
      auto sized = std::make_shared<EtAlgorithm>(*algo);
      sized->written_size = c.choice.et_written_size;
      algo = std::move(sized);
    }
    c.injected = std::move(algo);
  }
  return c;
}

std::shared_ptr<const AlgorithmContext> AlgorithmRegistry::context_for(
    const std::shared_ptr<const std::vector<std::uint32_t>>& members) {
  auto [it, fresh] = contexts_.try_emplace(*members);
  if (fresh) it->second = make_algorithm_context(members, topology_, gpu_memory());
  return it->second;
}

std::shared_ptr<const CollectiveProgram> AlgorithmRegistry::program_for(const CollectiveRequest& req) {
  // Not a structured binding: the lambdas below capture it (clang 14 cannot).
  const std::pair<const Chosen*, std::uint32_t> chosen = chosen_for(req);
  const Chosen* const ch = chosen.first;
  const std::uint32_t choice_id = chosen.second;
  const auto fast = std::make_tuple(static_cast<int>(req.type), req.bytes, req.chunks, choice_id,
                                    static_cast<const void*>(req.members.get()));
  if (auto it = by_ptr_.find(fast); it != by_ptr_.end()) return it->second;
  const auto key = std::make_tuple(static_cast<int>(req.type), req.bytes, req.chunks, choice_id, *req.members);
  std::shared_ptr<const CollectiveProgram> program;
  if (auto it = cache_.find(key); it != cache_.end()) {
    program = it->second;
  } else {
    const std::uint32_t n = req.group_size();
    if (const auto no = config_.unavailable.find(req.type); no != config_.unavailable.end()) throw InputError(no->second);
    bool halving_doubling = false;
    const auto make = [&](std::uint64_t bytes) -> std::shared_ptr<const CollectiveProgram> {
      if (n == 1 && !(ch && ch->injected) && !config_.astrasim_quirks) {
        // Nothing to send (system/collectives/one_member.h).
        const std::string algorithm = !ch                     ? default_algorithm(req.type)
                                      : ch->choice.hierarchical ? "hierarchical"
                                                                : ch->choice.native->name;
        return std::make_shared<const OneMemberProgram>(algorithm, normalized(req.type), bytes,
                                                        gpu_memory().bandwidth);
      }
      if (ch && ch->injected) {
        const EtAlgorithm& inj = *ch->injected;
        if (inj.ranks.size() != n) {
          throw InputError("collective algorithm '" + inj.source + "' is written for " +
                           std::to_string(inj.ranks.size()) + " ranks but a " + collective_name(req.type) +
                           " runs on a group of " + std::to_string(n) + " ranks");
        }
        check_injected_fits(inj, req.type, bytes);
        return std::make_shared<const EtProgram>(ch->injected, bytes);
      }
      if (ch && ch->choice.hierarchical) {
        // Refused only once a group runs it (a list longer than the
        // topology's dimensions, a dimension's NCCL that cannot run there):
        // the message says which choice, and where it was read.
        try {
          return make_hierarchical_program(ch->choice, req.type, bytes, req.chunks, *req.members,
                                           topology_dims_, config_.collective_optimization == "baseline",
                                           config_.active_chunks_per_dimension, config_.dimension_queue,
                                           config_.astrasim_quirks, config_.endpoint_delay,
                                           topology_ ? &topology_->dimensions() : nullptr, topology_,
                                           gpu_memory());
        } catch (const InputError& e) {
          const std::string where = chosen_where(req, choice_id);
          if (where.empty()) throw;
          throw InputError(where + ": " + e.what());
        }
      }
      if (!ch && default_is_hierarchical(req)) {
        // No algorithm named, on a group that spans several topology
        // dimensions: a ring per dimension (the hierarchical default), not
        // one flat ring over all its NPUs (on ASTRA-sim's
        // 16x16x16 torus a 1 GiB all-reduce takes 39.45 ms this way, 47.31
        // ms flat, and simulates 5x faster).
        static const AlgorithmChoice kHierarchical = [] {
          AlgorithmChoice c;
          c.hierarchical = true;  // dims empty: the type's default (ring) on every dimension
          return c;
        }();
        return make_hierarchical_program(kHierarchical, req.type, bytes, req.chunks, *req.members, topology_dims_,
                                         config_.collective_optimization == "baseline",
                                         config_.active_chunks_per_dimension, config_.dimension_queue,
                                         config_.astrasim_quirks, config_.endpoint_delay);
      }
      const NativeAlgorithm& algo = ch ? *ch->choice.native : *find_native_algorithm(default_algorithm(req.type));
      halving_doubling = algo.name == "halvingDoubling";
      if (algo.make_in_context) {
        if (!algo.supports(req.type)) return make_native_program(algo, {}, req.type, n, bytes, req.chunks);  // the error
        // Refused once a group runs it (NCCL's choice on this group): the
        // message says which choice, and where it was read, as above.
        try {
          return algo.make_in_context(normalized(req.type), bytes, req.chunks,
                                      ch ? ch->choice.params : AlgorithmParams{}, *context_for(req.members));
        } catch (const InputError& e) {
          const std::string where = ch ? chosen_where(req, choice_id) : std::string();
          if (where.empty()) throw;
          throw InputError(where + ": " + e.what());
        }
      }
      return make_native_program(algo, ch ? ch->choice.params : AlgorithmParams{},
                                 req.type, n, bytes, req.chunks);
    };
    // ASTRA-sim's doubleBinaryTree (with astrasim_quirks) and astrasimTree
    // chain their chunks themselves: a rank leaves a chunk once its sends are
    // issued, which the ChunkedProgram (a chunk ends when all its ops have) cannot say.
    const NativeAlgorithm* native = ch ? ch->choice.native : nullptr;
    const bool astrasim_tree =
        native && (native->name == "astrasimTree" || (config_.astrasim_quirks && native->name == "doubleBinaryTree"));
    if (astrasim_tree && native->supports(req.type) &&
        (config_.dataset_splits > 0 || config_.endpoint_delay > 0 || config_.astrasim_quirks)) {
      const std::vector<std::uint64_t> sizes = dataset_split_sizes(config_, req.type, n, req.bytes);
      const auto k = static_cast<std::uint32_t>(sizes.size());
      program = std::make_shared<const AstraSimTreeProgram>(
          normalized(req.type), n, sizes, config_.endpoint_delay, config_.active_chunks == 0 ? k : config_.active_chunks);
    } else if (ch && ch->choice.hierarchical && config_.astrasim_quirks && ch->choice.params.count("chunks")) {
      // ASTRA-sim's per-dimension lists (system/astrasim/astrasim_system.cpp): its
      // splits are the hierarchical program's chunks, not splits around it.
      SystemConfig one = config_;
      one.dataset_splits = 1;
      one.active_chunks = 1;
      one.astrasim_quirks = false;  // applied per phase (make_hierarchical_program), with
      one.endpoint_delay = 0;       // the endpoint delay at the end of each phase
      program = with_dataset_splits(one, req.type, n, req.bytes, make, halving_doubling);
    } else {
      program = with_dataset_splits(config_, req.type, n, req.bytes, make, halving_doubling);
    }
    // Chunks multiply the ops a collective holds at once: a count whose
    // ops cannot fit is refused before they are issued, not after minutes
    // of paging.
    std::uint64_t chunks = std::max<std::uint64_t>(req.chunks, config_.dataset_splits);
    std::string what = "collective.chunks";
    std::uint64_t chosen_chunks = 0;  // the most a chunks= of the choice (or of one of its dimensions) asks
    if (ch) {
      const auto asked = [&](const AlgorithmParams& p) {
        if (const auto it = p.find("chunks"); it != p.end()) chosen_chunks = std::max(chosen_chunks, it->second);
      };
      asked(ch->choice.params);
      for (const DimensionChoice& d : ch->choice.dims) asked(d.params);
    }
    if (chosen_chunks > 1) {
      chunks = std::max(chunks, chosen_chunks);
      what = chosen_where(req, choice_id);
      if (what.empty()) what = "chunks=" + std::to_string(chosen_chunks);
    } else if (config_.dataset_splits > req.chunks) {
      what = "collective.dataset_splits";
    }
    if (program && chunks > 1) check_held_ops(*program, req.type, chunks, what);
    cache_.emplace(key, program);
  }
  keep_.push_back(req.members);
  by_ptr_.emplace(fast, program);
  return program;
}

}  // namespace sim
