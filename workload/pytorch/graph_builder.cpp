#include "workload/pytorch/graph_builder.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <unordered_map>
#include <unordered_set>

namespace sim::pytorch {

namespace {

constexpr std::int64_t kUserScope = 7;  // RecordScope::USER_SCOPE: record_function annotations

std::uint64_t micros(double us) { return us <= 0 ? 0 : static_cast<std::uint64_t>(std::llround(us)); }

struct Item {
  std::uint64_t rf = 0;
  bool comm = false;
  std::size_t index = 0;  // host op (CPU) or comm.ops index
  std::vector<std::size_t> gpu;  // GPU activities emitted after it
  std::vector<std::size_t> placed_gpu;  // GPU activities placed here by time (no launch edge)
  std::uint64_t node = 0;  // its node id
  double ts = -1;          // Kineto start (µs), -1 unknown
  std::int64_t tid = -1;   // Kineto thread
};

}  // namespace

EtTrace build_rank_graph(const HostTrace& host, const KinetoTrace* kineto, const TraceLinks& links,
                         const CommExtraction& comm, const RankGroups& groups, int rank, BuildStats& stats) {
  const std::size_t n = host.ops.size();
  EtTrace trace;
  trace.path = host.path;
  trace.metadata.set_version("0.0.4");
  {
    auto* a = trace.metadata.add_attr();
    a->set_name("source");
    a->set_string_val("pytorch host trace " + host.schema + (kineto ? " + Kineto" : ""));
  }

  auto kop = [&](std::size_t i) -> const KinetoOp* {
    if (!kineto || links.kineto_of[i] < 0) return nullptr;
    return &kineto->ops[static_cast<std::size_t>(links.kineto_of[i])];
  };
  auto total_dur = [&](std::size_t i) -> double {
    if (const KinetoOp* k = kop(i)) return k->dur;
    return host.ops[i].dur_us.value_or(0.0);
  };

  // The backends' worker threads (gloo's pt_gloo_runloop): where Kineto puts
  // the work records, less the threads that call collectives. What runs there
  // (staging copies) is the collective's own work, not the rank's CPU time.
  std::unordered_set<std::int64_t> worker_threads, calling_threads;
  if (kineto) {
    for (const KinetoOp& k : kineto->ops) {
      if (k.name.rfind("gloo:", 0) == 0 || k.name.rfind("nccl:", 0) == 0) worker_threads.insert(k.tid);
    }
    for (const CommOp& c : comm.ops) {
      if (const KinetoOp* k = kop(c.op)) calling_threads.insert(k->tid);
    }
    for (std::int64_t t : calling_threads) worker_threads.erase(t);
  }
  // Which host ops become CPU nodes.
  std::vector<bool> cpu(n, false);
  for (std::size_t i = 0; i < n; ++i) {
    const HostOp& op = host.ops[i];
    const KinetoOp* k = kop(i);
    const bool on_worker = k && worker_threads.count(k->tid);
    if (on_worker && !comm.in_comm[i]) ++stats.worker_thread_ops;
    cpu[i] = !comm.in_comm[i] && !on_worker && !is_root_op(op) && op.scope != kUserScope &&
             op.name.find("process_group:init") == std::string::npos;
  }
  // Exclusive time: own duration less children's and less GPU waits.
  std::vector<double> excl(n, 0.0);
  for (std::size_t i = 0; i < n; ++i) excl[i] = total_dur(i);
  for (std::size_t i = 0; i < n; ++i) {
    if (links.parent[i] >= 0) excl[static_cast<std::size_t>(links.parent[i])] -= total_dur(i);
  }
  if (kineto) {
    for (std::size_t r = 0; r < kineto->runtime.size(); ++r) {
      if (kineto->runtime[r].is_sync() && links.runtime_owner[r] >= 0) {
        excl[static_cast<std::size_t>(links.runtime_owner[r])] -= kineto->runtime[r].dur;
      }
    }
  }

  // Host op -> comm op index (the op itself and its backend work record).
  std::unordered_map<std::size_t, std::size_t> comm_of;
  for (std::size_t c = 0; c < comm.ops.size(); ++c) {
    comm_of[comm.ops[c].op] = c;
    if (comm.ops[c].work_op >= 0) comm_of[static_cast<std::size_t>(comm.ops[c].work_op)] = c;
  }

  // Items in issue order.
  std::vector<Item> items;
  std::vector<std::int64_t> item_of_op(n, -1);
  std::vector<std::int64_t> item_of_comm(comm.ops.size(), -1);
  for (std::size_t i = 0; i < n; ++i) {
    if (!cpu[i]) continue;
    Item it;
    it.rf = host.ops[i].rf_id;
    it.index = i;
    if (const KinetoOp* k = kop(i)) {
      it.ts = k->ts;
      it.tid = k->tid;
    }
    items.push_back(std::move(it));
  }
  for (std::size_t c = 0; c < comm.ops.size(); ++c) {
    Item it;
    it.rf = host.ops[comm.ops[c].op].rf_id;
    it.comm = true;
    it.index = c;
    if (const KinetoOp* k = kop(comm.ops[c].op)) {
      it.ts = k->ts;
      it.tid = k->tid;
    }
    items.push_back(std::move(it));
  }
  std::stable_sort(items.begin(), items.end(), [](const Item& a, const Item& b) { return a.rf < b.rf; });
  for (std::size_t k = 0; k < items.size(); ++k) {
    if (items[k].comm) item_of_comm[items[k].index] = static_cast<std::int64_t>(k);
    else item_of_op[items[k].index] = static_cast<std::int64_t>(k);
  }

  // The item a time falls in: the last one (with a Kineto time) starting at or before it.
  std::vector<std::pair<double, std::size_t>> by_time;
  std::unordered_set<std::int64_t> cpu_threads;
  for (std::size_t k = 0; k < items.size(); ++k) {
    if (items[k].ts >= 0) by_time.emplace_back(items[k].ts, k);
    if (!items[k].comm && items[k].tid >= 0) cpu_threads.insert(items[k].tid);
  }
  std::sort(by_time.begin(), by_time.end());
  auto item_at = [&](double ts) -> std::int64_t {
    if (by_time.empty()) return items.empty() ? -1 : 0;
    auto it = std::upper_bound(by_time.begin(), by_time.end(), std::make_pair(ts, ~std::size_t{0}));
    if (it == by_time.begin()) return static_cast<std::int64_t>(by_time.front().second);
    return static_cast<std::int64_t>(std::prev(it)->second);
  };

  // GPU activities to the item that launched them (climbing to the nearest
  // ancestor that is a node), else placed by their launch time.
  std::vector<std::int64_t> launcher(kineto ? kineto->gpu.size() : 0, -1);
  if (kineto) {
    for (std::size_t g = 0; g < kineto->gpu.size(); ++g) {
      std::int64_t item = -1;
      for (std::int32_t o = links.gpu_owner[g]; o >= 0; o = links.parent[static_cast<std::size_t>(o)]) {
        const std::size_t oi = static_cast<std::size_t>(o);
        if (auto c = comm_of.find(oi); c != comm_of.end()) {
          item = item_of_comm[c->second];
          break;
        }
        if (item_of_op[oi] >= 0) {
          item = item_of_op[oi];
          break;
        }
      }
      if (item >= 0) {
        launcher[g] = item;
        items[static_cast<std::size_t>(item)].gpu.push_back(g);
      } else {
        const std::int64_t at = item_at(links.gpu_launch_ts[g]);
        ++stats.gpu_placed_by_time;
        if (at >= 0) items[static_cast<std::size_t>(at)].placed_gpu.push_back(g);
      }
    }
  }

  // Ids: METADATA 0, then each item followed by its GPU activities (launch order).
  std::uint64_t next_id = 1;
  std::vector<std::uint64_t> gpu_node(kineto ? kineto->gpu.size() : 0, 0);
  std::vector<std::size_t> gpu_emitted;  // in emission order
  for (Item& it : items) {
    it.node = next_id++;
    auto by_launch = [&](std::size_t a, std::size_t b) { return links.gpu_launch_ts[a] < links.gpu_launch_ts[b]; };
    std::vector<std::size_t> all = it.gpu;
    all.insert(all.end(), it.placed_gpu.begin(), it.placed_gpu.end());
    std::stable_sort(all.begin(), all.end(), by_launch);
    for (std::size_t g : all) {
      gpu_node[g] = next_id++;
      gpu_emitted.push_back(g);
    }
  }
  // Stream order: by GPU start time on each (device, stream).
  std::vector<std::uint64_t> stream_prev(gpu_node.size(), 0);
  std::vector<bool> has_stream_prev(gpu_node.size(), false);
  if (kineto) {
    std::map<std::pair<std::int64_t, std::int64_t>, std::vector<std::size_t>> streams;
    for (std::size_t g = 0; g < kineto->gpu.size(); ++g) streams[{kineto->gpu[g].device, kineto->gpu[g].stream}].push_back(g);
    for (auto& [key, list] : streams) {
      std::stable_sort(list.begin(), list.end(), [&](std::size_t a, std::size_t b) { return kineto->gpu[a].ts < kineto->gpu[b].ts; });
      for (std::size_t k = 1; k < list.size(); ++k) {
        stream_prev[list[k]] = gpu_node[list[k - 1]];
        has_stream_prev[list[k]] = true;
      }
    }
  }
  // GPU work launched up to a time: GPU activities sorted by launch time.
  std::vector<std::size_t> gpu_by_launch(gpu_node.size());
  for (std::size_t g = 0; g < gpu_by_launch.size(); ++g) gpu_by_launch[g] = g;
  std::stable_sort(gpu_by_launch.begin(), gpu_by_launch.end(),
                   [&](std::size_t a, std::size_t b) { return links.gpu_launch_ts[a] < links.gpu_launch_ts[b]; });
  auto last_gpu_launched_by = [&](double ts) -> std::int64_t {
    auto it = std::upper_bound(gpu_by_launch.begin(), gpu_by_launch.end(), ts,
                               [&](double t, std::size_t g) { return t < links.gpu_launch_ts[g]; });
    if (it == gpu_by_launch.begin()) return -1;
    return static_cast<std::int64_t>(*std::prev(it));
  };
  // Sync points: the next CPU item after the sync waits for the GPU work launched before it.
  std::vector<std::vector<std::uint64_t>> waits_after(items.size());
  if (kineto) {
    for (std::size_t r = 0; r < kineto->runtime.size(); ++r) {
      const KinetoRuntime& rt = kineto->runtime[r];
      if (!rt.is_sync()) continue;
      std::int64_t at = -1;
      if (links.runtime_owner[r] >= 0) {
        for (std::int32_t o = links.runtime_owner[r]; o >= 0; o = links.parent[static_cast<std::size_t>(o)]) {
          if (comm.in_comm[static_cast<std::size_t>(o)]) break;  // the backend's own wait: part of the collective
          if (item_of_op[static_cast<std::size_t>(o)] >= 0) {
            at = item_of_op[static_cast<std::size_t>(o)];
            break;
          }
        }
      } else if (cpu_threads.count(rt.tid)) {
        at = item_at(rt.ts);
      }
      if (at < 0) continue;
      const std::int64_t g = last_gpu_launched_by(rt.ts);
      if (g < 0) continue;
      waits_after[static_cast<std::size_t>(at)].push_back(gpu_node[static_cast<std::size_t>(g)]);
      ++stats.sync_points;
    }
  }

  // Emit.
  trace.nodes.reserve(1 + items.size() + gpu_emitted.size());
  {
    et::Node md;
    md.set_id(0);
    md.set_name("process_group:init");
    md.set_type(et::METADATA_NODE);
    md.mutable_inputs()->set_values(metadata_values(groups));
    trace.nodes.push_back(std::move(md));
  }
  std::int64_t prev_cpu = -1;                 // node id of the last CPU node
  std::vector<std::uint64_t> pending_cpu;     // deps the next CPU node takes
  std::int64_t last_gpu = -1;                 // node id of the last GPU node emitted
  std::uint64_t gate_seq = 0, gate_node = 0;  // NCCL-style blocking: each stream's next GPU node waits
  std::map<std::pair<std::int64_t, std::int64_t>, std::uint64_t> gate_applied;
  std::unordered_map<std::int64_t, std::uint64_t> comm_writer;  // storage -> comm node
  std::unordered_set<std::uint64_t> comm_waited;                // comm nodes the CPU chain already follows
  std::map<std::string, std::uint64_t> last_comm_of_group;      // a group runs its collectives in issue order
  auto add_dep = [](et::Node& node, std::uint64_t dep) {
    for (std::uint64_t d : node.data_deps()) {
      if (d == dep) return;
    }
    node.add_data_deps(dep);
  };

  for (std::size_t k = 0; k < items.size(); ++k) {
    Item& it = items[k];
    et::Node node;
    node.set_id(it.node);
    if (!it.comm) {
      const HostOp& op = host.ops[it.index];
      node.set_name(op.name);
      node.set_type(et::COMP_NODE);
      const bool measured = kop(it.index) != nullptr || op.dur_us.has_value();
      if (!measured) ++stats.cpu_without_duration;
      node.set_duration_micros(micros(excl[it.index]));
      set_attr_bool(node, "is_cpu_op", true);
      if (prev_cpu >= 0) add_dep(node, static_cast<std::uint64_t>(prev_cpu));
      for (std::uint64_t d : pending_cpu) add_dep(node, d);
      pending_cpu.clear();
      for (const TensorRef& t : op.inputs) {
        auto w = comm_writer.find(t.storage);
        if (w != comm_writer.end() && !comm_waited.count(w->second)) {
          add_dep(node, w->second);
          comm_waited.insert(w->second);
        }
      }
      prev_cpu = static_cast<std::int64_t>(it.node);
      ++stats.cpu_nodes;
    } else {
      const CommOp& c = comm.ops[it.index];
      const HostOp& op = host.ops[c.op];
      node.set_name(op.name);
      if (c.kind == CommKind::kCollective) {
        node.set_type(et::COMM_COLL_NODE);
        set_attr_int(node, "comm_type", static_cast<std::int64_t>(c.coll));
      } else {
        node.set_type(c.kind == CommKind::kSend ? et::COMM_SEND_NODE : et::COMM_RECV_NODE);
        std::int64_t peer = c.peer;
        for (const PgDef& g : groups.groups) {  // the group's rank -> the job's rank
          if (g.name == c.pg_name && !g.ranks.empty() && peer >= 0 && static_cast<std::size_t>(peer) < g.ranks.size()) {
            peer = g.ranks[static_cast<std::size_t>(peer)];
          }
        }
        set_attr_int(node, "comm_src", c.kind == CommKind::kSend ? rank : peer);
        set_attr_int(node, "comm_dst", c.kind == CommKind::kSend ? peer : rank);
        set_attr_int(node, "comm_tag", c.tag);
      }
      set_attr_int(node, "comm_size", static_cast<std::int64_t>(c.bytes));
      set_attr_bool(node, "is_cpu_op", false);
      if (!c.pg_name.empty()) set_attr_string(node, "pg_name", c.pg_name);
      if (prev_cpu >= 0) add_dep(node, static_cast<std::uint64_t>(prev_cpu));
      if (last_gpu >= 0) add_dep(node, static_cast<std::uint64_t>(last_gpu));
      if (auto g = last_comm_of_group.find(c.pg_name); g != last_comm_of_group.end()) add_dep(node, g->second);
      last_comm_of_group[c.pg_name] = it.node;
      const bool blocking = !c.async_op.value_or(false) || (c.kind == CommKind::kCollective && c.coll == CollectiveType::kBarrier);
      if (blocking) {
        if (c.backend == "nccl") {
          gate_node = it.node;
          ++gate_seq;
        } else {
          pending_cpu.push_back(it.node);
          comm_waited.insert(it.node);
        }
      }
      for (const std::vector<TensorRef>* side : {&op.inputs, &op.outputs}) {
        for (const TensorRef& t : *side) comm_writer[t.storage] = it.node;
      }
      ++stats.comm_nodes;
    }
    for (std::uint64_t w : waits_after[k]) pending_cpu.push_back(w);
    trace.nodes.push_back(std::move(node));

    std::vector<std::size_t> all = it.gpu;
    all.insert(all.end(), it.placed_gpu.begin(), it.placed_gpu.end());
    std::stable_sort(all.begin(), all.end(),
                     [&](std::size_t a, std::size_t b) { return links.gpu_launch_ts[a] < links.gpu_launch_ts[b]; });
    for (std::size_t g : all) {
      const KinetoGpuOp& ga = kineto->gpu[g];
      et::Node gn;
      gn.set_id(gpu_node[g]);
      gn.set_name(ga.name);
      gn.set_type(et::COMP_NODE);
      gn.set_duration_micros(micros(ga.dur));
      set_attr_bool(gn, "is_cpu_op", false);
      if (launcher[g] >= 0) add_dep(gn, it.node);
      if (has_stream_prev[g]) add_dep(gn, stream_prev[g]);
      const auto key = std::make_pair(ga.device, ga.stream);
      if (gate_seq > 0 && gate_applied[key] < gate_seq) {
        add_dep(gn, gate_node);
        gate_applied[key] = gate_seq;
      }
      last_gpu = static_cast<std::int64_t>(gpu_node[g]);
      ++stats.gpu_nodes;
      trace.nodes.push_back(std::move(gn));
    }
  }
  // Node ids were assigned in emission order, so nodes are in id order.
  return trace;
}

}  // namespace sim::pytorch
